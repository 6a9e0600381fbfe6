/** What `piw` exits with; the run outcomes are distinct so scripts can branch on them. */
export const ExitCode = {
  ok: 0, // the command worked; for a followed run: completed
  failed: 1, // the run failed or timed out, or the command failed (unknown run, refused change)
  waiting: 3, // the run stopped at a checkpoint and waits for `piw answer`
  cancelled: 4,
  parked: 5, // the run needs a person: see its recovery reason
  usage: 64, // bad arguments or input (EX_USAGE)
  hostUnavailable: 69, // no host could be reached or started (EX_UNAVAILABLE)
  detached: 130, // Ctrl-C: stopped following; the run goes on
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];
