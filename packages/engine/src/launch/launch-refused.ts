import type { ErrorCode } from "@piw/protocol";

/**
 * A launch that must not be saved, with every reason: the caller shows `message` and `problems`
 * (one per line) and nothing was recorded. Preflight failures stay in the calling turn (preflight rule).
 */
export class LaunchRefused extends Error {
  override readonly name = "LaunchRefused";
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly problems: readonly string[] = [],
    /** A usage mistake (wrong input, wrong answer) rather than a broken workflow. */
    readonly usage = true,
  ) {
    super(message);
  }

  /** The whole refusal as text, for a tool result or a terminal. */
  describe(): string {
    return [this.message, ...this.problems.map((problem) => `  ${problem}`)].join("\n");
  }
}
