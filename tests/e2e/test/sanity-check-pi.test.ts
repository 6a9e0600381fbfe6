import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  isNotice,
  lastMessageText,
  piwMessages,
  piwWorlds,
  text,
  toolCall,
  whenLastMessageContains,
} from "@piw/test-kit";

// The built-in sanity-check started in the real Pi from free words: `/workflow sanity-check <words>`.
const worlds = piwWorlds();
afterEach(() => worlds.close());

describe("/workflow sanity-check in Pi", () => {
  it("starts the built-in from free words, runs its reviewers and verifier in isolated sessions, and presents the verdict", async () => {
    const world = await worlds.start();
    const { model, pi, project } = world;
    const git = (...args: string[]) => execFileSync("git", args, { cwd: project, stdio: "ignore" });
    git("init", "-q", "-b", "main");
    git("config", "user.email", "dev@example.com");
    git("config", "user.name", "Dev");
    writeFileSync(join(project, "retry.ts"), "export const retries = 3;\n");
    git("add", "retry.ts");
    git("commit", "-qm", "base");
    writeFileSync(join(project, "retry.ts"), "export const retries = 4;\n");
    git("commit", "-qam", "four");
    writeFileSync(join(project, "retry.ts"), "export const retries = 5;\n");

    model.reply((r) =>
      lastMessageText(r).includes("Repository: ") && !lastMessageText(r).includes("Other reviewers")
        ? toolCall("workflow", {
            action: "submit",
            output: { verdict: "keep", summary: "A one-line constant change.", findings: [], questions: [] },
          })
        : undefined,
    );
    model.reply(
      whenLastMessageContains(
        "Other reviewers made the claims",
        toolCall("workflow", {
          action: "submit",
          output: {
            kept: [],
            dropped: [],
            verdict: "keep",
            summary: "Nothing to change.",
            requiredChanges: [],
            questions: [],
          },
        }),
      ),
    );
    model.reply(whenLastMessageContains("Final output", text("Verdict: keep.")));

    const since = pi.mark();
    await pi.prompt("/workflow sanity-check raise the retry count");
    const queued = await pi.waitForEvent(isNotice("queued (run"), { since, timeoutMs: 60_000 });
    const runId = /\(run ([^)]+)\)/.exec(String(queued.message))?.[1] as string;
    const done = await world.waitForRun(runId, (view) => view.status === "done", 180_000);
    expect(done.outcome).toBe("completed");
    expect(done.input).toEqual({ kind: "json", value: { focus: "raise the retry count" } });
    expect(done.output).toMatchObject({ kind: "json", value: { verdict: "keep", base: { ref: "HEAD^" } } });

    // Five isolated sessions, none of them the conversation: no step prompt was delivered to Pi.
    const reviewers = model.requests.filter((r) => lastMessageText(r).includes("Repository: "));
    expect(reviewers.length).toBeGreaterThanOrEqual(5);
    for (const request of reviewers) {
      expect(JSON.stringify(request.messages)).not.toContain("/workflow sanity-check");
    }
    const prompts = (await piwMessages(pi)).filter((m) => m.details.kind === "step_prompt");
    expect(prompts).toEqual([]);
    model.assertNoErrors();
  }, 300_000);
});
