import { chmodSync, closeSync, mkdirSync, openSync, readdirSync, statSync } from "node:fs";
import { basename, dirname } from "node:path";
import { StoreError } from "./errors.js";

/** The default data folder's name (`<project>/.gatehouse`): the store's own, whatever else is in it. */
const DATA_DIR_NAME = ".gatehouse";
/** What SQLite and the store keep beside the database file. */
const SIDE_FILES = ["-wal", "-shm", "-journal"];
const STORE_FOLDERS = ["transcripts", "locks"];

/**
 * Makes the SQLite store private before SQLite opens it, whoever created it first and with what modes:
 * its folder 0700 (when the folder is the store's own: the `.gatehouse` data folder, or one holding
 * nothing but the store's files), the database and its -wal/-shm 0600. SQLite gives new -wal and -shm
 * files the database's mode. A mode that cannot be tightened (someone else's file) is refused with a
 * line saying what to fix, before anything is written.
 */
export function makeStorePrivate(path: string): void {
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  createPrivately(path);
  if (folderIsTheStores(dir, basename(path))) tighten(dir, 0o700);
  tighten(path, 0o600);
  for (const suffix of SIDE_FILES) tighten(`${path}${suffix}`, 0o600);
}

function folderIsTheStores(dir: string, file: string): boolean {
  if (basename(dir) === DATA_DIR_NAME) return true;
  const own = new Set([file, ...SIDE_FILES.map((s) => `${file}${s}`), ...STORE_FOLDERS]);
  return readdirSync(dir).every((name) => own.has(name));
}

/** Removes every permission beyond `mode` for group and others; a file that is not there is left alone. */
function tighten(path: string, mode: number): void {
  let current: number;
  try {
    current = statSync(path).mode & 0o777;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  if ((current & 0o077) === 0) return;
  try {
    chmodSync(path, current & mode);
  } catch (error) {
    throw new StoreError(
      "invalid",
      `${path} is open to other users (mode ${current.toString(8)}) and cannot be made private (${(error as NodeJS.ErrnoException).code ?? "error"}): chmod ${mode.toString(8)} it, or have its owner run Gatehouse`,
    );
  }
}

/**
 * Creates the database file 0600 before SQLite opens it. An existing file is not opened: closing any
 * descriptor of a file drops every POSIX lock this process holds on it, and another store in this
 * process may hold SQLite's.
 */
function createPrivately(path: string): void {
  try {
    closeSync(openSync(path, "wx", 0o600));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
}
