// The built-in workflows exist only where workflow code runs: in this worker and in the preflight child,
// which resolve a name to them when no project or global file shadows it (the CLI and Pi never load them).
// Each revision counts the digest of the built-in's source files, so an edit inside its code changes it.
// They load on the first lookup of a built-in (a run or include of one by name, or a listing), not with
// the process: a run of a workflow file that names none never pays for them (about 2 MiB and 10–30 ms).
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { loadBuiltinsOnFirstLookup, registerBuiltinWorkflow } from "@piw/engine";

type Builtins = typeof import("@piw/builtins");

loadBuiltinsOnFirstLookup(() => {
  // Synchronous (Node's require of an ES module): a workflow file asks for a built-in while it evaluates.
  const require = createRequire(import.meta.url);
  const { BUILTIN_SOURCE_DIGESTS, BUILTIN_WORKFLOWS }: Builtins = require(
    fileURLToPath(import.meta.resolve("@piw/builtins")),
  );
  for (const definition of BUILTIN_WORKFLOWS) {
    registerBuiltinWorkflow(definition, { source: BUILTIN_SOURCE_DIGESTS[definition.name] ?? "" });
  }
});
