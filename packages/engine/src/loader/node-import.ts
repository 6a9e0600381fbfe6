/**
 * Node's own dynamic `import()`, in a module of its own that imports nothing. A test runner that runs
 * the engine's source through its own module graph hands this one file to Node unchanged (see
 * `server.deps.external` in vitest.shared.ts), so tests load workflow files exactly as production does.
 */
export function nodeImport(specifier: string): Promise<unknown> {
  return import(specifier);
}
