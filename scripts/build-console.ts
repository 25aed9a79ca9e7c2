// Builds the web console (console/) into dist/console: esbuild bundles the page's TypeScript
// (Preact, Chart.js) and CSS into assets/, and index.html and the files in console/public are
// copied beside them. The package ships the result; nothing is fetched when it runs.
//
//   npm run build            (the whole package)
//   tsx scripts/build-console.ts [OUTDIR]
import { cpSync, mkdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SOURCES = join(ROOT, "console");

/** Writes the built console to `outdir` (replacing what was there). */
export async function buildConsole(outdir: string = join(ROOT, "dist", "console")): Promise<void> {
  rmSync(outdir, { recursive: true, force: true });
  mkdirSync(join(outdir, "assets"), { recursive: true });
  await build({
    entryPoints: { app: join(SOURCES, "src", "main.tsx") },
    outdir: join(outdir, "assets"),
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    jsx: "automatic",
    jsxImportSource: "preact",
    minify: true,
    sourcemap: false,
    legalComments: "linked",
    logLevel: "warning",
  });
  cpSync(join(SOURCES, "index.html"), join(outdir, "index.html"));
  cpSync(join(SOURCES, "public"), join(outdir, "assets"), { recursive: true });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url))
  await buildConsole(process.argv[2] === undefined ? undefined : resolve(process.argv[2]));
