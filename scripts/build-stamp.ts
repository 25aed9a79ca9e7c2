// What dist/ was built from: a digest of every file the build reads from this repository (the
// sources, the console, the build scripts, the manifest and lockfile). `npm install` runs
// `prepare` (scripts/prepare.ts), which builds only when the digest differs from the one the last
// build wrote: an install builds once, and `npx gatehouse` inside a clone (npm links the clone
// into its npx cache and runs `prepare` again) finds dist/ current instead of rebuilding it.
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("..", import.meta.url));
const INPUTS = [
  "src",
  "console",
  "scripts/build.ts",
  "scripts/build-console.ts",
  "scripts/build-stamp.ts",
  "package.json",
  "package-lock.json",
  "tsconfig.json",
];

const stampFile = (root: string) => join(root, "dist", ".build-stamp");

function filesUnder(root: string, path: string): string[] {
  const full = join(root, path);
  if (!existsSync(full)) return [];
  if (!statSync(full).isDirectory()) return [full];
  return readdirSync(full, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

/** The digest of the build's inputs under `root`. */
export function sourcesDigest(root = ROOT): string {
  const hash = createHash("sha256");
  for (const file of INPUTS.flatMap((path) => filesUnder(root, path)).sort()) {
    hash.update(`${relative(root, file)}\0`);
    hash.update(readFileSync(file));
    hash.update("\0");
  }
  return hash.digest("hex");
}

/** Records that dist/ under `root` was built from the sources as they are now (the build's last step). */
export function writeStamp(root = ROOT): void {
  writeFileSync(stampFile(root), `${sourcesDigest(root)}\n`);
}

/** True when dist/ under `root` was built from the sources as they are now. */
export function distIsCurrent(root = ROOT): boolean {
  return existsSync(stampFile(root)) && readFileSync(stampFile(root), "utf8").trim() === sourcesDigest(root);
}
