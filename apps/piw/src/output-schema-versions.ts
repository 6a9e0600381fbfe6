/**
 * The `schema` tag of every `piw <command> --json` output (their shapes are in output-schemas.ts).
 * Apart from the schemas, so that quick routes can tag their output without loading zod.
 */
export const OUTPUT_SCHEMA_VERSIONS = {
  run: "piw.run.v1",
  answer: "piw.answer.v1",
  restart: "piw.restart.v1",
  resume: "piw.resume.v1",
  cancel: "piw.cancel.v1",
  pause: "piw.pause.v1",
  list: "piw.list.v1",
  status: "piw.status.v1",
  workflows: "piw.workflows.v1",
  view: "piw.view.v1",
  host: "piw.host-status.v1",
  herdr: "piw.herdr-sync.v1",
  schedule: "piw.schedule.v1",
  schedules: "piw.schedules.v1",
  error: "piw.error.v1",
} as const;
export type OutputName = keyof typeof OUTPUT_SCHEMA_VERSIONS;
