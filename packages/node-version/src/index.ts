export { exitUnlessNodeFits, NODE_TOO_OLD_EXIT, nodeVersionProblem } from "./node-version.js";
