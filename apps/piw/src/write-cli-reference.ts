// `pnpm docs:cli`: write docs/cli.md from the CLI's own tables (test/cli-reference.test.ts checks it).
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { renderCliReference } from "./cli-reference.js";

const target = fileURLToPath(new URL("../../../docs/cli.md", import.meta.url));
writeFileSync(target, renderCliReference());
process.stdout.write(`wrote ${target}\n`);
