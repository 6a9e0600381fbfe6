import { createHash, randomBytes } from "node:crypto";
import {
  closeSync,
  constants,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import { isAbsolute, join } from "node:path";
import { askIpcChild, type IpcChildOutcome, type IpcChildRequest } from "./ipc-child.js";
import { isPrivateDir, readPrivateFile } from "./private-state.js";

/** A file a preflight reply was prepared from, with the sha256 of the bytes it evaluated. */
interface PreflightCacheSource {
  path: string;
  sha256: string;
}

export interface CachedPreflightRequest extends IpcChildRequest {
  /** The state directory whose `preflight-cache/` keeps replies; undefined: no cache. */
  stateDir: string | undefined;
  /**
   * The files a reply depends on when it may be reused while they are unchanged; undefined: never reuse
   * it. Asked only of a child's reply (a miss), so a caller may load what checks it only then.
   */
  sourcesOf: (
    reply: unknown,
  ) => readonly PreflightCacheSource[] | undefined | Promise<readonly PreflightCacheSource[] | undefined>;
}

export type CachedPreflightOutcome = IpcChildOutcome & { cached?: true };

const CACHE_DIR = "preflight-cache";
/** Each distinct request (path, task, input) is one entry; the oldest go past this many. */
const MAX_ENTRIES = 256;
const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;

const sha256 = (bytes: string | Buffer) => createHash("sha256").update(bytes).digest("hex");

/**
 * Ask the preflight child, or reuse its earlier reply to the same request while every file that reply
 * was prepared from still has the bytes it evaluated. Only a prepared launch is reused, never a refusal:
 * a broken file is evaluated (and refused) afresh each time. What workflow code reads besides its
 * modules (env, other files, the clock) is not part of the key; the worker's check of the compiled
 * definition against the prepared one catches a definition that changed anyway. Never rejects.
 */
export async function askPreflightCached(ask: CachedPreflightRequest): Promise<CachedPreflightOutcome> {
  const stateDir = ask.stateDir !== undefined && isPrivateDir(ask.stateDir) ? ask.stateDir : undefined;
  const key = stateDir === undefined ? undefined : cacheKey(ask);
  if (stateDir === undefined || key === undefined) return askIpcChild(ask);
  const dir = join(stateDir, CACHE_DIR);
  const entry = join(dir, `${key}.json`);
  // The same request already being evaluated here (schedules of one file due together): its child's
  // reply is the one to reuse, not a second child started beside it.
  const earlier = evaluating.get(entry);
  if (earlier !== undefined) await earlier;
  const hit = cachedReply(dir, entry, ask.request);
  if (hit !== undefined) return hit;
  const evaluated = askIpcChild(ask).then(async (outcome) => {
    if (outcome.kind !== "replied") return outcome;
    const sources = await ask.sourcesOf(outcome.message);
    // Made only for a reply worth keeping: a refused launch leaves the state directory as it was.
    if (sources !== undefined && makeCacheDir(dir)) writeEntry(dir, key, sources, outcome.message);
    return outcome;
  });
  const settled = evaluated.then(() => {
    if (evaluating.get(entry) === settled) evaluating.delete(entry);
  });
  evaluating.set(entry, settled);
  return evaluated;
}

/** Entry path → the evaluation of that request in flight in this process. */
const evaluating = new Map<string, Promise<void>>();

function cachedReply(dir: string, entry: string, request: object): CachedPreflightOutcome | undefined {
  if (!isOwnPrivateDir(dir)) return undefined;
  const reply = readEntry(entry);
  if (reply === undefined) return undefined;
  const requestId = (request as { requestId?: unknown }).requestId;
  return { kind: "replied", message: { ...reply, requestId }, cached: true };
}

/** A real directory (not a link) of this user that no one else may read or write. */
function isOwnPrivateDir(dir: string): boolean {
  try {
    const stat = lstatSync(dir);
    const uid = process.getuid?.();
    return stat.isDirectory() && (uid === undefined || stat.uid === uid) && (stat.mode & 0o077) === 0;
  } catch {
    return false;
  }
}

function makeCacheDir(dir: string): boolean {
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") return false;
  }
  return isOwnPrivateDir(dir);
}

/**
 * The request without its ID, the child's argv, and which files its absolute words name (Node, the
 * preflight entry), by inode, size and change time: a new piw or a new Node is a new key. Not their
 * bytes: hashing Node's own binary would cost more than the preflight it saves.
 */
function cacheKey(ask: IpcChildRequest): string | undefined {
  const entries: string[] = [];
  for (const word of ask.command) {
    if (!isAbsolute(word)) continue;
    try {
      const stat = statSync(word);
      if (stat.isFile()) entries.push(`${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}`);
    } catch {
      return undefined;
    }
  }
  const request = { ...ask.request, requestId: null };
  return sha256(JSON.stringify({ command: ask.command, entries, request }));
}

function isSources(value: unknown): value is PreflightCacheSource[] {
  return (
    Array.isArray(value) &&
    value.every(
      (source: unknown) =>
        typeof source === "object" &&
        source !== null &&
        typeof (source as { path?: unknown }).path === "string" &&
        typeof (source as { sha256?: unknown }).sha256 === "string",
    )
  );
}

/** The reply an entry holds while its sources are unchanged; undefined for anything else. */
function readEntry(path: string): object | undefined {
  let text: string;
  try {
    const read = readPrivateFile(path, "a cached preflight reply");
    if (read === null) return undefined;
    text = read.text;
  } catch {
    // Another owner's file, a link, a FIFO: not ours to trust.
    return undefined;
  }
  let entry: { sources?: unknown; reply?: unknown };
  try {
    entry = JSON.parse(text) as typeof entry;
  } catch {
    return undefined;
  }
  const { sources, reply } = entry;
  if (!isSources(sources) || typeof reply !== "object" || reply === null) return undefined;
  for (const source of sources) {
    try {
      if (sha256(readFileSync(source.path)) !== source.sha256) return undefined;
    } catch {
      return undefined;
    }
  }
  return reply;
}

/** Write the entry 0600 under a fresh name, then move it in place: a reader sees all of it or none. */
function writeEntry(
  dir: string,
  key: string,
  sources: readonly PreflightCacheSource[],
  reply: unknown,
): void {
  const temp = join(dir, `.${key}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    const fd = openSync(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | O_NOFOLLOW, 0o600);
    try {
      writeSync(fd, JSON.stringify({ sources, reply }));
    } finally {
      closeSync(fd);
    }
    renameSync(temp, join(dir, `${key}.json`));
    pruneEntries(dir);
  } catch {
    // A cache that cannot be written only costs the next preflight its time.
    rmSync(temp, { force: true });
  }
}

/** Keep the newest MAX_ENTRIES entries. */
function pruneEntries(dir: string): void {
  const names = readdirSync(dir).filter((name) => name.endsWith(".json"));
  if (names.length <= MAX_ENTRIES) return;
  const aged = names
    .map((name) => ({ name, mtime: lstatSync(join(dir, name)).mtimeMs }))
    .sort((a, b) => a.mtime - b.mtime);
  for (const { name } of aged.slice(0, aged.length - MAX_ENTRIES)) rmSync(join(dir, name), { force: true });
}
