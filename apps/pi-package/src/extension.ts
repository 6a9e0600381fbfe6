// The Pi extension entry: on a Node too old for piw it says so once and adds nothing, rather than failing
// on a missing export while Pi loads it (Pi itself keeps running).
import { nodeVersionProblem } from "@piw/node-version";

const problem = nodeVersionProblem("piw", process.version);

function inertExtension(): void {
  process.stderr.write(`${problem}\n`);
}

const extension = problem === undefined ? (await import("./pi-extension.js")).default : inertExtension;
export default extension;
