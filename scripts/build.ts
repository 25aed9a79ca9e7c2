// Builds dist/. tsc checks the types and writes the declarations (dist/**/*.d.ts); esbuild writes
// the JavaScript: the package entry (dist/index.js) and the CLI (dist/cli/main.js) bundled
// together, with code splitting, so both load the same chunks — one module graph, whichever a
// process starts from: a plugin that imports "gatehouse" inside the CLI gets the CLI's own run
// context and catalog, not a second copy. Dependencies stay external (node_modules), and every
// `import()` stays a separate chunk loaded when it runs, as in the sources. Files the code
// finds by path rather than imports (the OpenClaw SDK shim) are entries of their own. Then the
// web console (console/) is built into dist/console (scripts/build-console.ts).
//
//   npm run build           (always builds; `npm install` runs scripts/prepare.ts, which skips an
//                            up-to-date dist/)
import { execFileSync } from "node:child_process";
import { chmodSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { build } from "esbuild";
import { buildConsole } from "./build-console.js";
import { writeStamp } from "./build-stamp.js";

const tsc = join(dirname(createRequire(import.meta.url).resolve("typescript/package.json")), "bin", "tsc");
rmSync("dist", { recursive: true, force: true });
execFileSync(process.execPath, [tsc, "-p", "tsconfig.json", "--emitDeclarationOnly"], { stdio: "inherit" });
await build({
  entryPoints: {
    index: "src/index.ts",
    "cli/main": "src/cli/main.ts",
    // The host adapters: subpath exports (gatehouse-runtime/ai-sdk, …), so the core imports no host's package.
    "adapters/ai-sdk": "src/adapters/ai-sdk.ts",
    "adapters/openai-agents": "src/adapters/openai-agents.ts",
    // A file of its own: an OpenClaw plugin's `openclaw/plugin-sdk` import is pointed at it.
    "plugins/openclaw/sdk/plugin-entry": "src/plugins/openclaw/sdk/plugin-entry.ts",
  },
  outdir: "dist",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  packages: "external",
  chunkNames: "chunks/[name]-[hash]",
  sourcemap: true,
  logLevel: "warning",
});
chmodSync("dist/cli/main.js", 0o755);
await buildConsole();
// Last, so an interrupted build leaves no stamp and the next `prepare` builds again.
writeStamp();
