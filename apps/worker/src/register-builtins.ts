// The built-in workflows exist only where workflow code runs: in this worker and in the preflight child,
// which resolve a name to them when no project or global file shadows it (the CLI and Pi never load them).
// Each revision counts the digest of the built-in's source files, so an edit inside its code changes it.
import { BUILTIN_SOURCE_DIGESTS, BUILTIN_WORKFLOWS } from "@piw/builtins";
import { registerBuiltinWorkflow } from "@piw/engine";

for (const definition of BUILTIN_WORKFLOWS) {
  registerBuiltinWorkflow(definition, { source: BUILTIN_SOURCE_DIGESTS[definition.name] ?? "" });
}
