import { appendFileSync, cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BUILTIN_SOURCE_DIGESTS, BUILTIN_WORKFLOWS } from "../src/index.js";
import { SRC, sourceDigests } from "../tools/source-digests.js";

const names = BUILTIN_WORKFLOWS.map((definition) => definition.name);

describe("the built-ins' source digests", () => {
  it("are current: after a change to a built-in's code, run pnpm builtins:digests", () => {
    expect(BUILTIN_SOURCE_DIGESTS).toEqual(sourceDigests(names));
  });

  it("change with any file a built-in owns or shares, and only for the built-ins that use it", () => {
    const copy = mkdtempSync(join(tmpdir(), "piw-builtin-sources-"));
    try {
      cpSync(SRC, copy, { recursive: true });
      const before = sourceDigests(names, copy);
      expect(before).toEqual(sourceDigests(names));
      appendFileSync(join(copy, "autoplan-prompts.ts"), "\n// an edit inside a prompt builder\n");
      const promptEdit = sourceDigests(names, copy);
      expect(promptEdit.autoplan).not.toBe(before.autoplan);
      expect(promptEdit["sanity-check"]).toBe(before["sanity-check"]);
      expect(promptEdit.autodoc).toBe(before.autodoc);
      appendFileSync(join(copy, "repo-scripts.ts"), "\n// a shared helper changed\n");
      const sharedEdit = sourceDigests(names, copy);
      for (const name of names) expect(sharedEdit[name], name).not.toBe(promptEdit[name]);
      // The lists are not any built-in's code.
      appendFileSync(join(copy, "builtin-workflows.ts"), "\n// reordered\n");
      expect(sourceDigests(names, copy)).toEqual(sharedEdit);
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });
});
