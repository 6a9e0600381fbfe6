import { NODE_TOO_OLD_EXIT } from "@piw/node-version";

/**
 * What `piw` exits with, one row per code: every command exits through this table, and `piw --help`
 * and docs/cli.md print it. The run outcomes are distinct so scripts can branch on them.
 */
export const EXIT_CODE_TABLE = [
  { name: "ok", code: 0, meaning: "the command worked; a followed run completed" },
  {
    name: "failed",
    code: 1,
    meaning: "the run failed or timed out, or the command failed (unknown run, refused change)",
  },
  {
    name: "waiting",
    code: 3,
    meaning: "the run stopped at a checkpoint and waits for an answer (piw answer)",
  },
  { name: "cancelled", code: 4, meaning: "the run was cancelled" },
  { name: "parked", code: 5, meaning: "the run is parked and needs a person: see its recovery reason" },
  {
    name: "usage",
    code: 64,
    meaning: "bad arguments or input, no such workflow, or no usable model; nothing was started",
  },
  { name: "hostUnavailable", code: 69, meaning: "no host could be reached or started" },
  {
    name: "notAPerson",
    code: 77,
    meaning: "piw answer refused: no terminal, or it runs under Pi (its bash tool); nothing was sent",
  },
  { name: "nodeTooOld", code: NODE_TOO_OLD_EXIT, meaning: "this Node is older than piw needs (22.19)" },
  { name: "detached", code: 130, meaning: "Ctrl-C: stopped following; the run goes on" },
] as const;

type ExitCodeRow = (typeof EXIT_CODE_TABLE)[number];

export const ExitCode = Object.fromEntries(EXIT_CODE_TABLE.map((row) => [row.name, row.code])) as {
  readonly [R in ExitCodeRow as R["name"]]: R["code"];
};
export type ExitCode = ExitCodeRow["code"];
