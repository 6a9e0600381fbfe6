import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { prepareInput, registerBuiltinWorkflow, resolveWorkflow, textDigest } from "@piw/engine";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultPlanPath, type PlanFacts, planSlug, renderPlan, utcDay } from "../src/autoplan-plan-file.js";
import { checkProposal, type Proposal } from "../src/autoplan-schemas.js";
import { BUILTIN_WORKFLOWS } from "../src/index.js";

const proposal: Proposal = {
  approaches: [
    {
      name: "Flag in the parser",
      summary: "Add --verbose to the argument table.",
      pros: ["small"],
      cons: ["none"],
      effort: "small",
    },
    {
      name: "Log levels",
      summary: "A --log-level option.",
      pros: ["general"],
      cons: ["more to test"],
      effort: "medium",
    },
  ],
  ideal: { endState: "Structured logs with levels.", dependsOn: ["the logging library's API"] },
  choice: { approach: "flag in the parser", reasons: ["It is what was asked for."] },
};

const facts: PlanFacts = {
  problem: "add a --verbose flag\n\nto the CLI  ",
  scope: null,
  constraints: ["no new dependency"],
  frame: {
    goal: "Let users see what the CLI does.",
    successCriteria: ["--verbose prints each step"],
    inScope: ["src/cli.ts"],
    outOfScope: ["the logging library"],
    weControl: ["the CLI's options"],
    outsideOurControl: ["the terminal"],
    evidence: [{ file: "src/cli.ts", fact: "options are parsed with parseArgs" }],
    blocker: null,
  },
  proposal,
  decision: {
    approach: "Flag in the parser",
    reasons: ["It is what was asked for."],
    chosenBy: "model",
    revisions: [],
  },
  plan: {
    title: "A --verbose flag",
    summary: "Add the flag and print each step.",
    steps: [
      {
        title: "Parse the flag",
        details: "Add it to the table.",
        files: ["src/cli.ts"],
        verify: "--help lists it",
      },
    ],
    tests: ["cli prints steps with --verbose"],
    risks: [{ risk: "noisy output", mitigation: "stderr only" }],
    openQuestions: [],
  },
};

describe("autoplan's plan file", () => {
  it("is named after the problem: lower-case ASCII words, cut at a word, never empty", () => {
    expect(planSlug("add a --verbose flag to the CLI")).toBe("add-a-verbose-flag-to-the-cli");
    expect(planSlug("Café: déjà vu über alles!")).toBe("cafe-deja-vu-uber-alles");
    const long = planSlug("word ".repeat(40));
    expect(long.length).toBeLessThanOrEqual(60);
    expect(long).toMatch(/^word(-word)*$/);
    expect(planSlug("x".repeat(80))).toBe("x".repeat(60));
    expect(planSlug("¿¿ !! ??")).toBe("plan");
    expect(defaultPlanPath("2026-12-03", "add a --verbose flag")).toBe(
      "docs/plans/2026-12-03-add-a-verbose-flag.md",
    );
    expect(utcDay(new Date("2026-12-03T23:59:59-05:00"))).toBe("2026-12-04");
  });

  it("quotes the requester's words verbatim and records how the approach was chosen", () => {
    const text = renderPlan(facts);
    expect(text.startsWith("# A --verbose flag\n")).toBe(true);
    expect(text).toContain("> add a --verbose flag\n>\n> to the CLI  \n");
    expect(text).toContain("**Flag in the parser**: the model's choice.");
    expect(text).toContain("### 1. Flag in the parser (effort: small)");
    expect(text).toContain("Files: `src/cli.ts`");
    expect(text.endsWith("\n")).toBe(true);
    const byPerson = renderPlan({
      ...facts,
      decision: { ...facts.decision, chosenBy: "person", revisions: ["consider log levels"] },
    });
    expect(byPerson).toContain("the model's choice, approved by a person at the approval gate");
    expect(byPerson).toContain("Revised at a person's request:\n\n- consider log levels");
  });

  it("has the same digest for the same facts and another for any change, so an unchanged replan is seen", () => {
    const digest = textDigest(renderPlan(facts));
    expect(textDigest(renderPlan(structuredClone(facts)))).toBe(digest);
    const changed = { ...facts, plan: { ...facts.plan, tests: ["another test"] } };
    expect(textDigest(renderPlan(changed))).not.toBe(digest);
    expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it("rests on a proposal whose choice names one of its approaches, each named once", () => {
    expect(checkProposal(proposal)).toBeUndefined();
    expect(checkProposal({ ...proposal, choice: { approach: "something else", reasons: ["x"] } })).toMatch(
      /must be the name of one of the approaches: Flag in the parser, Log levels/,
    );
    const twice = { ...proposal, approaches: [proposal.approaches[0], proposal.approaches[0]] } as Proposal;
    expect(checkProposal(twice)).toBe("give each approach a different name");
  });
});

describe("autoplan's input", () => {
  let root: string;
  const unregister: Array<() => void> = [];
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), "piw-autoplan-"));
    for (const definition of BUILTIN_WORKFLOWS) unregister.push(registerBuiltinWorkflow(definition));
  });
  afterAll(() => {
    for (const undo of unregister) undo();
    rmSync(root, { recursive: true, force: true });
  });

  it("takes free words as the problem, and wants a markdown plan file", async () => {
    const loaded = await resolveWorkflow("autoplan", { cwd: root, homeDir: root });
    expect((await prepareInput(loaded, { task: "add a --verbose flag to the CLI" })).input).toEqual({
      problem: "add a --verbose flag to the CLI",
    });
    await expect(prepareInput(loaded, { input: { problem: "   " } })).rejects.toThrow(/does not match/);
    await expect(prepareInput(loaded, { input: { problem: "x", planFile: "plan.txt" } })).rejects.toThrow(
      /does not match/,
    );
    const whole = { problem: "x", planFile: "PLAN.md", approval: "required", constraints: ["c"] };
    expect((await prepareInput(loaded, { input: whole })).input).toEqual(whole);
  });
});
