export { exitUnlessNodeFits, MINIMUM_NODE, NODE_TOO_OLD_EXIT, nodeVersionProblem } from "./node-version.js";
