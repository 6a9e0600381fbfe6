export { runWorkerProcess } from "./worker-process.js";
