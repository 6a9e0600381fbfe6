import { writeFileSync } from "node:fs";
import { BUILTIN_WORKFLOWS } from "../src/builtin-workflows.ts";
import { DIGESTS_FILE, digestsModule, sourceDigests } from "./source-digests.ts";

// `pnpm builtins:digests`: write src/source-digests.ts after a change to a built-in's code.
writeFileSync(
  DIGESTS_FILE,
  digestsModule(sourceDigests(BUILTIN_WORKFLOWS.map((definition) => definition.name))),
);
