import { lstatSync, readFileSync, realpathSync, type Stats } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";

/** The npm package that carries Pi's SDK (`createAgentSession`). */
export const PI_SDK_PACKAGE = "@earendil-works/pi-coding-agent";

/** Why a folder offered as Pi's SDK is not used; none of them names or quotes the folder's contents. */
type PiSdkRefusal =
  | "not_absolute"
  | "missing"
  | "symlink" // the path itself, or a folder on the way to it, is a link: use what it points to
  | "not_directory"
  | "not_owned" // neither this user's nor root's
  | "open_to_others" // writable by group or others, so someone else could change the code it holds
  | "not_pi_sdk"; // no package.json naming the SDK package, or no entry file inside the folder

type PiSdkDirCheck = { ok: true; dir: string; entry: string } | { ok: false; refusal: PiSdkRefusal };

const MAX_MANIFEST_BYTES = 256 * 1024;

function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}

/** Owned by this user or by root (a system-wide install), and not writable by anyone else. */
function trusted(stat: Stats): PiSdkRefusal | null {
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid && stat.uid !== 0) return "not_owned";
  if ((stat.mode & 0o022) !== 0) return "open_to_others";
  return null;
}

function entryOf(dir: string, manifest: unknown): string | null {
  if (typeof manifest !== "object" || manifest === null) return null;
  const { name, exports, main } = manifest as { name?: unknown; exports?: unknown; main?: unknown };
  if (name !== PI_SDK_PACKAGE) return null;
  const root = (exports as { "."?: { import?: unknown } } | undefined)?.["."]?.import;
  const relativeEntry = typeof root === "string" ? root : typeof main === "string" ? main : "dist/index.js";
  const entry = resolve(dir, relativeEntry);
  const inside = relative(dir, entry);
  if (inside.startsWith("..") || isAbsolute(inside)) return null;
  return entry;
}

/**
 * Checks a folder offered as Pi's SDK package before any code in it may be loaded: an absolute path,
 * its own real path (no link anywhere on the way), a folder of this user or root that nobody else can
 * write, whose package.json names the SDK package, with its entry file (a regular file of the same
 * owners) inside it. Returns the folder and the entry file to import.
 */
export function checkPiSdkDir(path: string): PiSdkDirCheck {
  if (!isAbsolute(path)) return { ok: false, refusal: "not_absolute" };
  const dir = resolve(path);
  const stat = lstatOrNull(dir);
  if (stat === null) return { ok: false, refusal: "missing" };
  if (stat.isSymbolicLink()) return { ok: false, refusal: "symlink" };
  if (!stat.isDirectory()) return { ok: false, refusal: "not_directory" };
  let real: string;
  try {
    real = realpathSync(dir);
  } catch {
    return { ok: false, refusal: "missing" };
  }
  if (real !== dir) return { ok: false, refusal: "symlink" };
  const refused = trusted(stat);
  if (refused) return { ok: false, refusal: refused };

  const manifestPath = join(dir, "package.json");
  const manifestStat = lstatOrNull(manifestPath);
  if (manifestStat === null || !manifestStat.isFile() || manifestStat.size > MAX_MANIFEST_BYTES) {
    return { ok: false, refusal: "not_pi_sdk" };
  }
  let manifest: unknown;
  try {
    manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
  } catch {
    return { ok: false, refusal: "not_pi_sdk" };
  }
  const entry = entryOf(dir, manifest);
  if (entry === null) return { ok: false, refusal: "not_pi_sdk" };
  const entryStat = lstatOrNull(entry);
  if (entryStat === null || !entryStat.isFile()) return { ok: false, refusal: "not_pi_sdk" };
  const entryRefused = trusted(entryStat) ?? trusted(manifestStat);
  if (entryRefused) return { ok: false, refusal: entryRefused };
  return { ok: true, dir, entry };
}

/**
 * Pi's SDK folder as a running Pi shows it: the package that holds the file Pi was started from
 * (`process.argv[1]`, through its links), found by walking up to the package.json that names the SDK
 * package. Null when Pi runs from somewhere else (a compiled binary with its modules built in).
 */
export function findPiSdkDir(startedFrom: string | undefined = process.argv[1]): string | null {
  if (startedFrom === undefined || !isAbsolute(startedFrom)) return null;
  let dir: string;
  try {
    dir = dirname(realpathSync(startedFrom));
  } catch {
    return null;
  }
  for (;;) {
    const check = checkPiSdkDir(dir);
    if (check.ok) return check.dir;
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}
