import { type PiwWorld, startPiwWorld, type WorldOptions } from "./piw-fixture.ts";

export interface PiwWorlds {
  /** Builds the test's world (fake model, piw state, Pi session with the package). */
  start(options?: WorldOptions): Promise<PiwWorld>;
  /** Ends every world started since the last call: a file's `afterEach(() => worlds.close())`. */
  close(): Promise<void>;
}

/** The worlds of a test file, each closed after its test even when the test fails. */
export function piwWorlds(): PiwWorlds {
  let open: PiwWorld[] = [];
  return {
    async start(options) {
      const world = await startPiwWorld(options);
      open.push(world);
      return world;
    },
    async close() {
      const closing = open;
      open = [];
      for (const world of closing) await world.close();
    },
  };
}
