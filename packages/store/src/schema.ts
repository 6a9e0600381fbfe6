/** The schema identity saved in `piw_meta`. There is no v2 and no migration: a mismatch means reset. */
export const SCHEMA_ID = "piw.state.v1";

const RUN_STATUSES = "'queued','starting','running','parked','done','failed','cancelled'";
const OUTCOMES = "'completed','waiting','failed','timed_out','cancelled'";

/** Schema v1. Every table is STRICT; `checkLayout` compares a file against exactly this text. */
export const SCHEMA_SQL = `
CREATE TABLE piw_meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
) STRICT;

CREATE TABLE blobs (
  hash TEXT PRIMARY KEY,
  media_type TEXT NOT NULL CHECK (media_type IN ('application/json', 'text/plain')),
  size INTEGER NOT NULL,
  content BLOB NOT NULL,
  created_at INTEGER NOT NULL
) STRICT;

CREATE TABLE runs (
  run_id TEXT PRIMARY KEY,
  root_run_id TEXT NOT NULL,
  parent_run_id TEXT REFERENCES runs (run_id),
  origin_command TEXT NOT NULL CHECK (origin_command IN ('start', 'continue', 'restart')),
  next_command TEXT NOT NULL CHECK (next_command IN ('start', 'resume', 'continue', 'restart')),
  restart_number INTEGER NOT NULL,
  parent_terminal_fingerprint TEXT,
  accepted_path TEXT,
  accepted_visit INTEGER,
  accepted_answer_hash TEXT REFERENCES blobs (hash),
  workflow_name TEXT NOT NULL,
  source_json TEXT NOT NULL,
  definition_digest TEXT NOT NULL,
  manifest_hash TEXT NOT NULL REFERENCES blobs (hash),
  origin_kind TEXT NOT NULL CHECK (origin_kind IN ('pi', 'cli', 'schedule')),
  origin_session TEXT,
  origin_schedule TEXT,
  scheduled_for INTEGER,
  status TEXT NOT NULL CHECK (status IN (${RUN_STATUSES})),
  outcome TEXT CHECK (outcome IS NULL OR outcome IN (${OUTCOMES})),
  generation INTEGER NOT NULL,
  claim_token TEXT,
  lease_expires_at INTEGER,
  revision INTEGER NOT NULL,
  progress_revision INTEGER NOT NULL,
  launch_revision INTEGER,
  recovery_reason TEXT,
  wake_at INTEGER,
  paused INTEGER NOT NULL CHECK (paused IN (0, 1)),
  step_count INTEGER NOT NULL,
  cursor_path TEXT,
  cursor_visit INTEGER,
  input_hash TEXT REFERENCES blobs (hash),
  env_hash TEXT REFERENCES blobs (hash),
  final_output_hash TEXT REFERENCES blobs (hash),
  error_code TEXT,
  error_hash TEXT REFERENCES blobs (hash),
  presentation_hash TEXT REFERENCES blobs (hash),
  notify_model_failure INTEGER NOT NULL CHECK (notify_model_failure IN (0, 1)),
  notify_model_cancel INTEGER NOT NULL CHECK (notify_model_cancel IN (0, 1)),
  working_dir TEXT,
  request_key TEXT,
  budget_json TEXT,
  terminal_fingerprint TEXT,
  presentation_state TEXT NOT NULL CHECK (presentation_state IN ('none', 'pending', 'created', 'failed')),
  presentation_error TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  started_at INTEGER,
  finished_at INTEGER
) STRICT;

CREATE UNIQUE INDEX runs_session_reservation ON runs (origin_session)
  WHERE status IN ('queued', 'starting', 'running') AND origin_session IS NOT NULL;
CREATE UNIQUE INDEX runs_one_continuation ON runs (parent_run_id)
  WHERE origin_command = 'continue' AND error_code IS NOT 'answer_invalid';
CREATE UNIQUE INDEX runs_one_restart ON runs (parent_run_id) WHERE origin_command = 'restart';
CREATE UNIQUE INDEX runs_request_key ON runs (request_key) WHERE request_key IS NOT NULL;
CREATE INDEX runs_status ON runs (status, updated_at);
CREATE INDEX runs_wake ON runs (wake_at) WHERE wake_at IS NOT NULL AND paused = 0;
CREATE INDEX runs_schedule ON runs (origin_schedule, status) WHERE origin_schedule IS NOT NULL;
CREATE INDEX runs_created ON runs (created_at DESC, run_id);
CREATE INDEX runs_presentation ON runs (finished_at) WHERE presentation_state IN ('pending', 'failed');

CREATE TABLE schedules (
  schedule_id TEXT PRIMARY KEY,
  workflow_ref TEXT NOT NULL,
  working_dir TEXT NOT NULL,
  task TEXT,
  input_hash TEXT REFERENCES blobs (hash),
  env_hash TEXT REFERENCES blobs (hash),
  timing_kind TEXT NOT NULL CHECK (timing_kind IN ('every', 'cron')),
  every_ms INTEGER,
  cron TEXT,
  time_zone TEXT,
  overlap TEXT NOT NULL CHECK (overlap IN ('skip', 'buffer-one', 'cancel-previous', 'allow')),
  catch_up TEXT NOT NULL CHECK (catch_up IN ('none', 'latest', 'all')),
  catch_up_window_ms INTEGER NOT NULL,
  jitter_ms INTEGER NOT NULL,
  until_at INTEGER,
  anchor_at INTEGER NOT NULL,
  next_for INTEGER,
  fire_at INTEGER,
  paused INTEGER NOT NULL CHECK (paused IN (0, 1)),
  pause_reason TEXT CHECK (pause_reason IS NULL OR pause_reason IN ('user', 'failures')),
  pause_note TEXT,
  buffered_for INTEGER,
  failures INTEGER NOT NULL,
  last_for INTEGER,
  last_at INTEGER,
  last_outcome TEXT CHECK (last_outcome IS NULL OR last_outcome IN ('started', 'skipped', 'buffered', 'missed', 'failed')),
  last_run_id TEXT,
  last_error_code TEXT,
  last_error TEXT,
  revision INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;
CREATE INDEX schedules_fire ON schedules (fire_at) WHERE fire_at IS NOT NULL AND paused = 0;

CREATE TABLE run_steps (
  run_id TEXT NOT NULL REFERENCES runs (run_id),
  path TEXT NOT NULL,
  visit INTEGER NOT NULL,
  node_kind TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('running', 'succeeded', 'failed', 'timed_out')),
  output_hash TEXT REFERENCES blobs (hash),
  error_code TEXT,
  error_hash TEXT REFERENCES blobs (hash),
  next_path TEXT,
  started_at INTEGER NOT NULL,
  finished_at INTEGER,
  timeout_ms INTEGER,
  deadline_at INTEGER,
  stopped_at INTEGER,
  due_at INTEGER,
  failed_attempts INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (run_id, path, visit)
) STRICT;

CREATE TABLE effects (
  effect_id TEXT PRIMARY KEY,
  run_id TEXT NOT NULL REFERENCES runs (run_id),
  path TEXT NOT NULL,
  visit INTEGER NOT NULL,
  effect_type TEXT NOT NULL,
  ordinal INTEGER NOT NULL,
  mode TEXT NOT NULL CHECK (mode IN ('idempotent', 'manual')),
  request_fingerprint TEXT NOT NULL,
  request_hash TEXT NOT NULL REFERENCES blobs (hash),
  status TEXT NOT NULL CHECK (status IN ('reserved', 'settled', 'failed')),
  result_hash TEXT REFERENCES blobs (hash),
  error_code TEXT,
  error_hash TEXT REFERENCES blobs (hash),
  reserved_at INTEGER NOT NULL,
  settled_at INTEGER
) STRICT;
CREATE INDEX effects_run ON effects (run_id, path, visit);

CREATE TABLE turns (
  turn_id TEXT PRIMARY KEY,
  run_id TEXT REFERENCES runs (run_id),
  path TEXT,
  visit INTEGER,
  session_id TEXT NOT NULL,
  request_id TEXT NOT NULL,
  message_id TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('open', 'ended', 'lost', 'unowned')),
  end_reason TEXT,
  tokens INTEGER NOT NULL DEFAULT 0,
  usd REAL NOT NULL DEFAULT 0,
  started_at INTEGER NOT NULL,
  ended_at INTEGER,
  session_file TEXT,
  first_entry_id TEXT,
  last_entry_id TEXT
) STRICT;
CREATE UNIQUE INDEX turns_request ON turns (session_id, request_id);
CREATE UNIQUE INDEX turns_one_open_per_session ON turns (session_id) WHERE status = 'open';
CREATE INDEX turns_run ON turns (run_id, status);

CREATE TABLE messages (
  message_id TEXT PRIMARY KEY,
  run_id TEXT NOT NULL REFERENCES runs (run_id),
  session_id TEXT,
  kind TEXT NOT NULL CHECK (kind IN ('step_prompt', 'notify', 'launch_failure', 'terminal', 'presentation')),
  path TEXT,
  visit INTEGER,
  body_hash TEXT NOT NULL REFERENCES blobs (hash),
  trigger_turn INTEGER NOT NULL CHECK (trigger_turn IN (0, 1)),
  status TEXT NOT NULL CHECK (status IN ('pending', 'claimed', 'delivered', 'cancelled')),
  claim_token TEXT,
  lease_expires_at INTEGER,
  created_at INTEGER NOT NULL,
  delivered_at INTEGER
) STRICT;
CREATE INDEX messages_session ON messages (session_id, status, created_at);
CREATE INDEX messages_run ON messages (run_id, status);

CREATE TABLE run_progress (
  run_id TEXT NOT NULL REFERENCES runs (run_id),
  path TEXT NOT NULL,
  visit INTEGER NOT NULL,
  attempt INTEGER NOT NULL,
  done REAL,
  total REAL,
  message TEXT,
  eta INTEGER,
  scope TEXT NOT NULL CHECK (scope IN ('step', 'run')),
  samples TEXT NOT NULL,
  saves INTEGER NOT NULL,
  first_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (run_id, path, visit)
) STRICT;

CREATE TABLE run_events (
  seq INTEGER PRIMARY KEY,
  run_id TEXT NOT NULL REFERENCES runs (run_id),
  revision INTEGER NOT NULL,
  type TEXT NOT NULL,
  path TEXT,
  visit INTEGER,
  data TEXT,
  at INTEGER NOT NULL
) STRICT;
CREATE INDEX run_events_run ON run_events (run_id, seq);

CREATE TABLE worker_launches (
  launch_id TEXT PRIMARY KEY,
  run_id TEXT NOT NULL REFERENCES runs (run_id),
  generation INTEGER NOT NULL,
  command_type TEXT NOT NULL CHECK (command_type IN ('start', 'resume', 'continue', 'restart')),
  launch_revision INTEGER NOT NULL,
  pid INTEGER,
  exit_kind TEXT CHECK (exit_kind IS NULL OR exit_kind IN ('reported', 'lost', 'orphaned')),
  exit_phase TEXT,
  exit_code TEXT,
  exit_message TEXT,
  exit_decision TEXT CHECK (exit_decision IS NULL OR exit_decision IN ('none', 'relaunch', 'parked', 'failed', 'requeued')),
  started_at INTEGER NOT NULL,
  alive_at INTEGER,
  ended_at INTEGER
) STRICT;
CREATE INDEX worker_launches_run ON worker_launches (run_id, started_at);
CREATE INDEX worker_launches_open ON worker_launches (started_at) WHERE exit_decision IS NULL;
`;
