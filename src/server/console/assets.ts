import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, extname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { PACKAGE_NAME } from "../../version.js";

/**
 * The console's built files (`npm run build` writes them to dist/console from console/), read
 * into memory when the server starts: a request names one of these files exactly or gets a
 * 404, so no part of a URL ever reaches the filesystem.
 */
export interface ConsoleAsset {
  readonly body: Buffer;
  readonly type: string;
  readonly etag: string;
}

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".woff2": "font/woff2",
  ".json": "application/json; charset=utf-8",
  ".txt": "text/plain; charset=utf-8",
};

/** dist/console of the package this module belongs to (found by walking up to its package.json). */
export function defaultAssetsDir(): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest)) {
      try {
        if ((JSON.parse(readFileSync(manifest, "utf8")) as { name?: string }).name === PACKAGE_NAME)
          return join(dir, "dist", "console");
      } catch {}
    }
    const up = dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}

/** Every file under `dir` by its URL path (`index.html`, `assets/app.js`); undefined when not built. */
export function loadConsoleAssets(dir: string | undefined): Map<string, ConsoleAsset> | undefined {
  if (dir === undefined || !existsSync(join(dir, "index.html"))) return undefined;
  const files = new Map<string, ConsoleAsset>();
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const path = join(d, name);
      if (statSync(path).isDirectory()) walk(path);
      else {
        const type = TYPES[extname(name)];
        if (type === undefined) continue;
        const body = readFileSync(path);
        const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`;
        files.set(relative(dir, path).split(sep).join("/"), { body, type, etag });
      }
    }
  };
  walk(dir);
  return files;
}
