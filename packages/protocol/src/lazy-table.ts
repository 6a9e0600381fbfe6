/** A table whose entries are built by the functions of `T`, each on its first read. */
export type LazyTable<T extends Record<string, () => unknown>> = {
  readonly [K in keyof T]: ReturnType<T[K]>;
};

/**
 * A table of schemas built on first use: building zod schemas is most of a short process's start
 * (`piw list` reads two of the client protocol's twenty-odd methods), so each entry is built when it
 * is first read and then kept as a plain property. Every entry is still a full schema: nothing that
 * reads one parses less.
 */
export function lazyTable<T extends Record<string, () => unknown>>(builders: T): LazyTable<T> {
  const table: Record<string, unknown> = {};
  for (const [name, build] of Object.entries(builders)) {
    Object.defineProperty(table, name, {
      enumerable: true,
      configurable: true,
      get() {
        const value = build();
        Object.defineProperty(table, name, { value, enumerable: true, configurable: false, writable: false });
        return value;
      },
    });
  }
  return table as LazyTable<T>;
}

/** One value built on first use and then kept. */
export function once<T>(build: () => T): () => T {
  let built: { value: T } | undefined;
  return () => {
    built ??= { value: build() };
    return built.value;
  };
}
