import { describeBuiltins, type PreflightOptions } from "@piw/engine";

/**
 * The built-in workflow names, for completions: asked of one preflight child the first time and kept
 * for the session, since they change only with piw itself. No preflight (or a failed one): no names.
 */
export class BuiltinNames {
  private names: readonly string[] = [];
  private loading: Promise<void> | undefined;

  constructor(private readonly preflight: PreflightOptions | undefined) {}

  async get(cwd: string): Promise<readonly string[]> {
    const { preflight } = this;
    if (preflight === undefined) return [];
    this.loading ??= describeBuiltins(cwd, preflight).then(
      (found) => {
        this.names = found.map((builtin) => builtin.name);
      },
      () => undefined,
    );
    await this.loading;
    return this.names;
  }
}
