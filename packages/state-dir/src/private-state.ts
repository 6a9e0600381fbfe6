import {
  chmodSync,
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  type Stats,
  statSync,
} from "node:fs";
import { dirname, resolve } from "node:path";
import { type StatePaths, statePaths } from "./state-paths.js";

/** What is wrong with a state path; each one is refused before anything is read, written or sent. */
export type StateRefusal =
  | "not_owned" // owned by another user
  | "symlink" // a symbolic link where piw expects its own file or socket
  | "not_directory"
  | "not_regular_file"
  | "open_to_others" // writable by group or others, so someone else could replace what is inside
  | "changed"; // the file was replaced between the check and its use

/**
 * A state directory, file or socket that piw will not use. The message names the path and what to
 * do; it never holds file contents.
 */
export class StateDirRefused extends Error {
  override readonly name = "StateDirRefused";
  constructor(
    readonly refusal: StateRefusal,
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}

/** Which file a path named when it was checked; a later check with another identity means it was replaced. */
export interface FileIdentity {
  dev: number;
  ino: number;
}

const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
// Opening a FIFO planted in place of a state file must not block the host.
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;

function currentUid(): number | undefined {
  return process.getuid?.();
}

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}

function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch (error) {
    if (errorCode(error) === "ENOENT") return null;
    throw error;
  }
}

const OWN_IT = "Remove it, or set PIW_HOME to a folder of your own.";

function refuseForeign(path: string, what: string, stat: Stats): void {
  const uid = currentUid();
  if (uid !== undefined && stat.uid !== uid) {
    throw new StateDirRefused(
      "not_owned",
      path,
      `${path} (${what}) belongs to another user (uid ${stat.uid}); piw uses only state of its own user. ${OWN_IT}`,
    );
  }
}

/**
 * A symlinked state directory is followed only when the link itself is ours: a link planted by
 * someone else (say in /tmp) would hand them where our state goes.
 */
function directoryBehind(path: string): Stats | null {
  const link = lstatOrNull(path);
  if (link === null) return null;
  if (!link.isSymbolicLink()) return link;
  refuseForeign(path, "a symbolic link to the state directory", link);
  try {
    return statSync(path);
  } catch (error) {
    if (errorCode(error) === "ENOENT") return null;
    throw error;
  }
}

function refuseNonDirectory(path: string, stat: Stats): void {
  if (!stat.isDirectory()) {
    throw new StateDirRefused("not_directory", path, `${path} is not a directory. ${OWN_IT}`);
  }
}

/**
 * For the host and the store: create the state directory private to this user (0700), tighten one we
 * own, refuse one that is another user's (or a link another user made).
 */
export function prepareStateDir(stateDir: string): StatePaths {
  const paths = statePaths(stateDir);
  if (directoryBehind(paths.stateDir) === null) mkdirSync(paths.stateDir, { recursive: true, mode: 0o700 });
  const stat = directoryBehind(paths.stateDir);
  if (stat === null) throw new StateDirRefused("changed", paths.stateDir, `${paths.stateDir} vanished.`);
  refuseNonDirectory(paths.stateDir, stat);
  refuseForeign(paths.stateDir, "the state directory", stat);
  if ((stat.mode & 0o777) !== 0o700) chmodSync(paths.stateDir, 0o700);
  return paths;
}

/**
 * Whether `dir` already exists as a directory of this user that no one else may write (read only:
 * nothing is created). A cache kept there cannot be planted by someone else.
 */
export function isPrivateDir(dir: string): boolean {
  try {
    const stat = directoryBehind(resolve(dir));
    if (stat === null || !stat.isDirectory()) return false;
    refuseForeign(dir, "the state directory", stat);
    return (stat.mode & 0o022) === 0;
  } catch {
    return false;
  }
}

function refuseOpenToOthers(path: string, what: string, stat: Stats): void {
  if ((stat.mode & 0o022) !== 0) {
    const mode = (stat.mode & 0o777).toString(8).padStart(3, "0");
    throw new StateDirRefused(
      "open_to_others",
      path,
      `${path} (${what}) is writable by other users (mode ${mode}); piw will not trust it. Run chmod 700 on the state directory, or set PIW_HOME to a private folder.`,
    );
  }
}

/**
 * For a client, before it connects: the socket's directory and the socket must be this user's and
 * writable by no one else, or whoever could plant the socket would receive our requests. Read only;
 * a missing directory or socket is fine (no host runs yet). Node cannot ask the kernel who listens
 * on a Unix socket (no SO_PEERCRED), so these lstat checks stand in for it: only the owner of a
 * directory nobody else may write can bind a socket in it.
 */
export function verifyHostSocketForClient(socketPath: string): void {
  const dirPath = dirname(resolve(socketPath));
  const dir = directoryBehind(dirPath);
  if (dir === null) return;
  refuseNonDirectory(dirPath, dir);
  refuseForeign(dirPath, "the state directory", dir);
  refuseOpenToOthers(dirPath, "the state directory", dir);
  const socket = lstatOrNull(socketPath);
  if (socket === null) return;
  if (socket.isSymbolicLink()) {
    throw new StateDirRefused(
      "symlink",
      socketPath,
      `${socketPath} is a symbolic link, not the host's socket; piw will not connect through it. ${OWN_IT}`,
    );
  }
  refuseForeign(socketPath, "the host socket", socket);
  refuseOpenToOthers(socketPath, "the host socket", socket);
}

function refuseOpenError(path: string, what: string, error: unknown): never {
  if (errorCode(error) === "ELOOP") {
    throw new StateDirRefused(
      "symlink",
      path,
      `${path} (${what}) is a symbolic link; piw opens only its own files in the state directory. ${OWN_IT}`,
    );
  }
  throw error;
}

function checkOpened(path: string, what: string, fd: number): Stats {
  const stat = fstatSync(fd);
  if (!stat.isFile()) {
    throw new StateDirRefused("not_regular_file", path, `${path} (${what}) is not a regular file. ${OWN_IT}`);
  }
  refuseForeign(path, what, stat);
  return stat;
}

/**
 * Use an existing state file through a descriptor opened without following links, once it proved a
 * regular file of this user; null when there is none.
 */
function withPrivateFile<T>(path: string, what: string, use: (fd: number, stat: Stats) => T): T | null {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (error) {
    if (errorCode(error) === "ENOENT") return null;
    return refuseOpenError(path, what, error);
  }
  try {
    return use(fd, checkOpened(path, what, fd));
  } finally {
    closeSync(fd);
  }
}

/**
 * Check an existing state file: it must be a regular file of this user; its mode is tightened to 0600
 * on the checked descriptor. Returns which file it is, or null when there is none.
 */
export function securePrivateFile(path: string, what: string): FileIdentity | null {
  return withPrivateFile(path, what, (fd, stat) => {
    if ((stat.mode & 0o777) !== 0o600) fchmodSync(fd, 0o600);
    return { dev: stat.dev, ino: stat.ino };
  });
}

/** Create a state file 0600 (never through a link), or check the one that is already there. */
export function createPrivateFile(path: string, what: string): FileIdentity {
  try {
    closeSync(openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | O_NOFOLLOW, 0o600));
  } catch (error) {
    if (errorCode(error) !== "EEXIST") return refuseOpenError(path, what, error);
  }
  const identity = securePrivateFile(path, what);
  if (identity === null)
    throw new StateDirRefused("changed", path, `${path} (${what}) vanished while it was created.`);
  return identity;
}

/**
 * After a library opened `path` by name (better-sqlite3 has no descriptor to give): make sure the
 * name still leads to the very file that was checked, and not to a link or a replacement.
 */
export function confirmSameFile(path: string, what: string, expected: FileIdentity): void {
  const now = lstatOrNull(path);
  if (now === null || now.isSymbolicLink() || now.dev !== expected.dev || now.ino !== expected.ino) {
    throw new StateDirRefused(
      "changed",
      path,
      `${path} (${what}) was replaced while piw opened it; another process is changing the state directory. ${OWN_IT}`,
    );
  }
}

/** Read a small state file (the host lock) through a no-follow descriptor, with the same owner checks. */
export function readPrivateFile(path: string, what: string): { text: string; identity: FileIdentity } | null {
  return withPrivateFile(path, what, (fd, stat) => ({
    text: readFileSync(fd, "utf8"),
    identity: { dev: stat.dev, ino: stat.ino },
  }));
}
