import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  isNotice,
  lastMessageText,
  lastToolResultText,
  piwMessages,
  piwWorlds,
  text,
  toolCall,
  whenLastMessageContains,
} from "@piw/test-kit";

// The built-in autodoc started in the real Pi from free words: `/workflow autodoc <words>`. The update
// runs in the conversation; the assessor and the verifier in isolated read-only sessions.
const worlds = piwWorlds();
afterEach(() => worlds.close());

const NEW_README = "# retry\n\n`withRetry(run, { retries })` runs `run` up to `retries` times (default 3).\n";
const submit = (output: unknown) => toolCall("workflow", { action: "submit", output });

describe("/workflow autodoc in Pi", () => {
  it("updates the README in the conversation, verifies the claim in isolation, and ends ready with the digest", async () => {
    const world = await worlds.start();
    const { model, pi, project } = world;
    const git = (...args: string[]) => execFileSync("git", args, { cwd: project, encoding: "utf8" }).trim();
    git("init", "-q", "-b", "main");
    git("config", "user.email", "dev@example.com");
    git("config", "user.name", "Dev");
    writeFileSync(join(project, ".git", "info", "exclude"), ".pi/\n");
    writeFileSync(join(project, "README.md"), "# retry\n\n`withRetry(run)` runs `run` three times.\n");
    writeFileSync(join(project, "retry.ts"), "export function withRetry(run: () => void): void {}\n");
    git("add", "README.md", "retry.ts");
    git("commit", "-qm", "base");
    writeFileSync(
      join(project, "retry.ts"),
      "export function withRetry(run: () => void, { retries = 3 } = {}): void {\n  for (let i = 0; i < retries; i++) run();\n}\n",
    );
    git("commit", "-qam", "retries option");

    model.reply(
      whenLastMessageContains(
        "Find the documentation this change makes",
        submit({
          documents: [
            {
              path: "README.md",
              decision: "update",
              reason: "It does not mention the retries option.",
              edits: ["Document the retries option and its default."],
            },
          ],
          summary: "The README describes withRetry.",
        }),
      ),
    );
    model.reply((r) => {
      const path = /(\/\S+\/README\.md)/.exec(lastMessageText(r))?.[1];
      return lastMessageText(r).includes("Update the documentation for this change") && path !== undefined
        ? toolCall("write", { path, content: NEW_README })
        : undefined;
    });
    model.reply((r) =>
      lastToolResultText(r)?.includes("Successfully wrote")
        ? submit({ files: [{ path: "README.md", change: "Documented the retries option." }] })
        : undefined,
    );
    model.reply(
      whenLastMessageContains(
        "List every claim the added or changed lines make",
        submit({
          claims: [
            {
              document: "README.md",
              claim: "withRetry takes a retries option, default 3",
              backed: true,
              evidence: [{ file: "retry.ts", line: 1, quote: "{ retries = 3 } = {}" }],
            },
          ],
        }),
      ),
    );
    model.reply(whenLastMessageContains("Final output", text("Ready: README.md updated.")));
    model.reply((r) => (lastToolResultText(r) !== undefined ? text("Done.") : undefined));

    const since = pi.mark();
    await pi.prompt("/workflow autodoc the new retry option");
    const queued = await pi.waitForEvent(isNotice("queued (run"), { since, timeoutMs: 60_000 });
    const runId = /\(run ([^)]+)\)/.exec(String(queued.message))?.[1] as string;
    const done = await world.waitForRun(runId, (view) => view.status === "done", 180_000);
    expect(done.outcome).toBe("completed");
    expect(done.input).toEqual({ kind: "json", value: { task: "the new retry option" } });
    const worktree = join(`${project}.worktrees`, `piw-${runId}`);
    const digest = createHash("sha256")
      .update(readFileSync(join(worktree, "README.md")))
      .digest("hex");
    expect(done.output).toMatchObject({
      kind: "json",
      value: {
        status: "ready",
        workspace: { path: worktree, branch: `piw/${runId}` },
        documents: [{ path: "README.md", decision: "update", changed: true, digest: `sha256:${digest}` }],
        rounds: 1,
      },
    });
    expect(readFileSync(join(worktree, "README.md"), "utf8")).toBe(NEW_README);

    // The update was the one step prompt delivered to the conversation; the others ran isolated.
    const prompts = (await piwMessages(pi)).filter((m) => m.details.kind === "step_prompt");
    expect(prompts.map((m) => m.details.path)).toEqual(["update"]);
    model.assertNoErrors();
  }, 300_000);
});
