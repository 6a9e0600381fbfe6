/** The full CLI (cli.js), loaded for `argv`: what every command not served by a quick route runs in. */
export async function loadCli(argv: readonly string[]): Promise<typeof import("./cli.js")> {
  // A command checks a few replies with each schema: zod's generated fast path costs more to build
  // (tens of ms at start) than it saves. Set before any schema is built, which reads it. The viewer
  // (`piw view`, bare `piw`) checks a push per change for as long as it runs, and keeps it.
  if (argv.length > 0 && argv[0] !== "view") (await import("zod")).config({ jitless: true });
  return import("./cli.js");
}
