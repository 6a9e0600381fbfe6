// `import { defineWorkflow, agent, ... } from "piw"`: the authoring API and its types, for the editor and
// type checker of a project that installs piw. At run time the workflow loader maps `piw` to the running
// engine's own module, so a workflow file needs no node_modules.
export * from "piw";
