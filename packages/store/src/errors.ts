/** What a caller should do about a store failure. Messages never carry SQL, input or stacks. */
export type StoreErrorCode =
  | "layout_mismatch" // the file has another layout: back it up and reset it
  | "not_a_database" // the file is not a SQLite database
  | "insecure_path" // the state directory or file is not private to this user
  | "payload_too_large" // a blob exceeds the size limit
  | "invalid_record" // an operation's input failed validation
  | "answer_invalid" // a checkpoint answer fails the checkpoint's saved schema: correct it and answer again
  | "answer_refused" // the checkpoint is for someone else to answer (its answeredBy)
  | "not_found" // a reader was asked for an unknown ID
  | "wrong_media_type" // a blob was read as the wrong type (a bug in the caller)
  | "illegal_transition" // a status change the run-status table forbids (a bug in the caller)
  | "store_busy" // another writer held the database past the busy timeout: retry later
  | "store_failed" // SQLite failed for another reason (disk full, I/O error)
  | "store_closed"; // the store was used after close()

export class StoreError extends Error {
  override readonly name = "StoreError";
  constructor(
    readonly code: StoreErrorCode,
    message: string,
  ) {
    super(message);
  }
}

interface SqliteLikeError {
  code?: unknown;
}

/** The one normalizer at the SQLite boundary: every thrown value leaves as a StoreError. */
export function toStoreError(error: unknown): StoreError {
  if (error instanceof StoreError) return error;
  const code =
    typeof (error as SqliteLikeError)?.code === "string" ? String((error as SqliteLikeError).code) : "";
  if (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED")) {
    return new StoreError("store_busy", "The state database is busy; retry the operation.");
  }
  if (code === "SQLITE_NOTADB") {
    return new StoreError("not_a_database", "The state file is not a SQLite database.");
  }
  if (code.startsWith("SQLITE_FULL")) {
    return new StoreError("store_failed", "The disk holding the state database is full.");
  }
  if (
    code.startsWith("SQLITE_IOERR") ||
    code.startsWith("SQLITE_CANTOPEN") ||
    code.startsWith("SQLITE_READONLY")
  ) {
    return new StoreError("store_failed", `The state database could not be read or written (${code}).`);
  }
  if (code.startsWith("SQLITE_")) {
    return new StoreError("store_failed", `The state database refused an operation (${code}).`);
  }
  if (error instanceof TypeError || error instanceof RangeError) {
    return new StoreError("invalid_record", "The operation received a value the store cannot save.");
  }
  return new StoreError("store_failed", "The state store failed unexpectedly.");
}
