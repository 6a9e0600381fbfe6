import { createHash, randomBytes } from "node:crypto";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import type { ManagedEffects } from "../compiler/compiled-workflow.js";

/** The effect type `writeTextFile` saves under; one per call within a node visit. */
const WRITE_EFFECT = "file.write";

/** A text's digest as `sha256:<hex>`, over its UTF-8 bytes. */
export function textDigest(text: string): string {
  return `sha256:${createHash("sha256").update(text, "utf8").digest("hex")}`;
}

function isMissing(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "ENOENT" || code === "ENOTDIR";
}

/**
 * The digest of a file's text (see `textDigest`), or null when there is no file. A relative path is
 * taken from the run's working directory. Read-only: safe in a compute node, e.g. to decide before a
 * write whether the file already holds what would be written.
 */
export async function fileDigest(path: string): Promise<string | null> {
  try {
    return textDigest(await readFile(resolve(path), "utf8"));
  } catch (error) {
    if (isMissing(error)) return null;
    throw error;
  }
}

/** What `writeTextFile` returns: where the text is, its digest and its size in bytes. */
export interface WrittenTextFile {
  path: string;
  digest: string;
  bytes: number;
}

/**
 * Writes `text` to `path` (relative: from the run's working directory; parent folders are made) as one
 * managed idempotent effect whose request is the absolute path and the text's digest. The file is
 * replaced whole (a temporary file renamed over it), never left half written. A retry after a crash
 * adopts a file that already holds this text instead of writing it again; the same node visit asking
 * to write other text or another path under the same effect is a conflict, as for any effect.
 */
export async function writeTextFile(
  effects: ManagedEffects,
  path: string,
  text: string,
): Promise<WrittenTextFile> {
  const request = { path: resolve(path), digest: textDigest(text) };
  return effects.idempotent(WRITE_EFFECT, request, async () => {
    const written = { ...request, bytes: Buffer.byteLength(text, "utf8") };
    if ((await fileDigest(request.path)) === request.digest) return written;
    await mkdir(dirname(request.path), { recursive: true });
    const temporary = `${request.path}.${randomBytes(6).toString("hex")}.tmp`;
    try {
      await writeFile(temporary, text, "utf8");
      await rename(temporary, request.path);
    } finally {
      await rm(temporary, { force: true });
    }
    return written;
  });
}
