export { exitUnlessNodeFits, nodeVersionProblem } from "./node-version.js";
