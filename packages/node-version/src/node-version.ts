/**
 * The oldest Node piw runs on: 22.19 has `module.registerHooks`, which the workflow loader needs, and
 * type stripping without a flag. Every process entry checks this before it imports anything else, so an
 * older Node says so in one line instead of failing on a missing export.
 */
const MINIMUM_NODE = [22, 19] as const;

/** EX_CONFIG: this Node cannot run piw. Distinct from the CLI's run outcomes and 69 (no host). */
export const NODE_TOO_OLD_EXIT = 78;

/** The one-line refusal for `version` (such as "v20.11.1"), or undefined when it is new enough. */
export function nodeVersionProblem(process: string, version: string): string | undefined {
  const [major = 0, minor = 0] = version.replace(/^v/, "").split(".").map(Number);
  const [needMajor, needMinor] = MINIMUM_NODE;
  if (major > needMajor || (major === needMajor && minor >= needMinor)) return undefined;
  return `${process}: needs Node ${needMajor}.${needMinor} or newer; this is Node ${version} (${globalThis.process.execPath})`;
}

/** Exit with the one-line refusal when this Node is too old. */
export function exitUnlessNodeFits(process: string): void {
  const problem = nodeVersionProblem(process, globalThis.process.version);
  if (problem === undefined) return;
  globalThis.process.stderr.write(`${problem}\n`);
  globalThis.process.exit(NODE_TOO_OLD_EXIT);
}
