import type { FileHandle } from "node:fs/promises";
import { open, readFile, stat } from "node:fs/promises";
import { homedir } from "node:os";
import path from "node:path";
import { ToolError } from "../types.js";

/**
 * Resolves a path the model gave against the project directory, so hooks and the filesystem
 * see one absolute path. `~` expands like a shell would, since models write it.
 */
export function resolvePath(p: string, cwd: string): string {
  if (p === "~") return homedir();
  if (p.startsWith("~/")) return path.join(homedir(), p.slice(2));
  return path.resolve(cwd, p);
}

/** How many leading bytes are checked for NUL when deciding a file is binary (git's rule). */
export const BINARY_SNIFF_BYTES = 8192;

export function hasNulByte(buf: Uint8Array): boolean {
  return buf.indexOf(0) !== -1;
}

/** True when the first bytes of the open file contain a NUL byte. */
export async function looksBinary(handle: FileHandle): Promise<boolean> {
  const buf = Buffer.alloc(BINARY_SNIFF_BYTES);
  const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
  return hasNulByte(buf.subarray(0, bytesRead));
}

export async function sniffBinary(file: string): Promise<boolean> {
  const handle = await open(file, "r");
  try {
    return await looksBinary(handle);
  } finally {
    await handle.close();
  }
}

/**
 * Turns a filesystem error into the message the model should read. Anything unexpected is
 * still a ToolError: a failed file operation must never crash the run.
 */
export function fsToolError(err: unknown, file: string): ToolError {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case "ENOENT":
      return new ToolError(`File does not exist: ${file}`, { cause: err });
    case "EISDIR":
      return new ToolError(`${file} is a directory, not a file`, { cause: err });
    case "ENOTDIR":
      return new ToolError(`A parent of ${file} is not a directory`, { cause: err });
    case "EACCES":
    case "EPERM":
      return new ToolError(`Permission denied: ${file}`, { cause: err });
    default:
      return new ToolError(`${file}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
}

/** Rethrows ToolErrors and abort errors as they are; maps everything else with fsToolError. */
export function asToolError(err: unknown, file: string): Error {
  if (err instanceof ToolError) return err;
  if (err instanceof Error && err.name === "AbortError") return err;
  return fsToolError(err, file);
}

/**
 * Fails unless `file` is a regular file or does not exist yet. Checked before reading or
 * writing, because opening a FIFO blocks until the other end appears.
 */
export async function assertRegularFileOrMissing(file: string): Promise<void> {
  const info = await stat(file).catch((err: unknown) => {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  });
  if (info === null || info.isFile()) return;
  if (info.isDirectory()) throw new ToolError(`${file} is a directory, not a file`);
  throw new ToolError(`${file} is not a regular file`);
}

/**
 * The file's text, or null when it does not exist and `missingIsNull` says a missing file is
 * fine (a write or an edit that creates it); any other error is thrown.
 */
export async function readExistingText(
  file: string,
  signal: AbortSignal,
  missingIsNull: boolean,
): Promise<string | null> {
  return readFile(file, { encoding: "utf8", signal }).catch((err: unknown) => {
    if (missingIsNull && (err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  });
}
