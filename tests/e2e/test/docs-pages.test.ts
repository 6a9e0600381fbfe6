import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO } from "@piw/test-kit";

/**
 * The docs as files: every relative link leads to a file that exists (and to a heading that exists
 * when it names one), and the user docs speak only of piw itself.
 */

/** Linked before they exist: written on another branch from the CLI's own table. */
const LANDING_ELSEWHERE = new Set(["docs/cli.md"]);

function markdownFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return markdownFiles(path);
    return name.endsWith(".md") ? [path] : [];
  });
}

const USER_DOCS = [
  join(REPO, "README.md"),
  join(REPO, "apps", "pi-package", "README.md"),
  join(REPO, "apps", "pi-package", "skills", "piw", "SKILL.md"),
  ...markdownFiles(join(REPO, "docs")).filter((path) => !path.includes(`${join("docs", "maintainers")}`)),
];
const ALL_DOCS = [...new Set([...USER_DOCS, ...markdownFiles(join(REPO, "docs"))])];

/** Markdown without its fenced blocks and inline code, where links are not links. */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, "").replace(/`[^`\n]*`/g, "");
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .replace(/`/g, "")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");
}

function anchorsOf(file: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const match of readFileSync(file, "utf8")
    .replace(/^```[\s\S]*?^```/gm, "")
    .matchAll(/^#{1,6} (.+)$/gm)) {
    const base = slug(match[1] ?? "");
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

function brokenLinks(file: string): string[] {
  const broken: string[] = [];
  for (const match of prose(readFileSync(file, "utf8")).matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = match[1] ?? "";
    if (/^[a-z]+:/i.test(target)) continue;
    const [path = "", anchor] = target.split("#");
    const resolved = path === "" ? file : resolve(dirname(file), path);
    const name = relative(REPO, resolved);
    if (!existsSync(resolved)) {
      if (!LANDING_ELSEWHERE.has(name)) broken.push(`${relative(REPO, file)}: ${target} (no such file)`);
      continue;
    }
    if (anchor !== undefined && resolved.endsWith(".md") && !anchorsOf(resolved).has(anchor)) {
      broken.push(`${relative(REPO, file)}: ${target} (no such heading)`);
    }
  }
  return broken;
}

describe("the docs", () => {
  it("have an entry page, a quickstart, troubleshooting, and maintainer pages in their own folder", () => {
    for (const page of ["README.md", "quickstart.md", "troubleshooting.md", "workflows.md"]) {
      expect(existsSync(join(REPO, "docs", page)), page).toBe(true);
    }
    for (const page of [
      "architecture",
      "state",
      "identity",
      "runtime",
      "reliability",
      "development",
      "rules",
      "performance-history",
    ]) {
      expect(existsSync(join(REPO, "docs", "maintainers", `${page}.md`)), page).toBe(true);
      expect(existsSync(join(REPO, "docs", `${page}.md`)), `docs/${page}.md moved`).toBe(false);
    }
  });

  it("link only to files and headings that exist", () => {
    expect(ALL_DOCS.length).toBeGreaterThan(15);
    expect(ALL_DOCS.flatMap(brokenLinks)).toEqual([]);
  });

  it("catch a broken link or heading (the checker itself)", () => {
    expect(slug("`piw: needs Node 22.19 or newer` (exit 78)")).toBe("piw-needs-node-2219-or-newer-exit-78");
    expect(slug("`agent`: the model does a step")).toBe("agent-the-model-does-a-step");
    expect(anchorsOf(join(REPO, "docs", "troubleshooting.md")).has("a-parked-run-exit-5")).toBe(true);
    expect(anchorsOf(join(REPO, "docs", "troubleshooting.md")).has("no-such-heading")).toBe(false);
  });

  it("for users speak of piw only, not of the history of its requirements", () => {
    const words = /\b(seeds?|predecessors?)\b/gi;
    const found = USER_DOCS.flatMap((file) =>
      [...readFileSync(file, "utf8").matchAll(words)].map((m) => `${relative(REPO, file)}: ${m[0]}`),
    );
    expect(USER_DOCS.some((file) => file.endsWith(join("docs", "quickstart.md")))).toBe(true);
    expect(found).toEqual([]);
  });

  it("name the same node kinds in the README, the authoring guide and the node pages", () => {
    const guide = readFileSync(join(REPO, "docs", "workflows.md"), "utf8");
    // The guide's sections are the list: one `### \`kind\`: …` heading per node kind.
    const kinds = [...guide.matchAll(/^### `([a-z]+)`:/gm)].map((m) => m[1] ?? "");
    expect(kinds).toEqual(
      expect.arrayContaining(["agent", "compute", "shell", "action", "notify", "checkpoint"]),
    );
    const readme = readFileSync(join(REPO, "README.md"), "utf8");
    const intro = readme.slice(0, readme.indexOf("## Install"));
    const nodesSection = guide.slice(guide.indexOf("## Nodes"), guide.indexOf("### Deadlines"));
    for (const kind of kinds) {
      expect(intro, `README names ${kind}`).toContain(`\`${kind}\``);
      expect(nodesSection, `the guide's list names ${kind}`).toContain(`\`${kind}\``);
    }
    for (const kind of ["agent", "compute", "shell", "action", "notify", "checkpoint", "decision", "wait"]) {
      expect(existsSync(join(REPO, "docs", "nodes", `${kind}.md`)), `docs/nodes/${kind}.md`).toBe(true);
    }
    expect(intro).toMatch(/includes/);
  });
});
