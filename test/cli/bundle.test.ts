// The built package (npm run build): the CLI and the package entry are bundled together with code
// splitting, so they load the same chunks. A plugin that imports "gatehouse" inside the CLI must get
// the CLI's own modules — its run context (AsyncLocalStorage) and catalog — not a second copy.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, symlink } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { put, tempProjects } from "./helpers.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const DIST = join(ROOT, "dist");
const BUILT_CLI = join(DIST, "cli", "main.js");

function runBuilt(
  args: readonly string[],
  cwd: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BUILT_CLI, ...args], {
      cwd,
      env: { PATH: process.env.PATH ?? "", HOME: cwd },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** The JavaScript files of dist/, relative to it. */
function distScripts(dir = DIST): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return distScripts(path);
    return entry.name.endsWith(".js") ? [relative(DIST, path)] : [];
  });
}

/** The specifiers a built file imports at load time (not its `import()`s). */
const staticImports = (file: string) =>
  [
    ...readFileSync(join(DIST, file), "utf8").matchAll(
      /^(?:import|export)\s[^;]*?from\s+"([^"]+)"|^import\s+"([^"]+)"/gm,
    ),
  ].map((m) => (m[1] ?? m[2]) as string);

/** The source modules a built file holds (esbuild marks each with a `// src/….ts` line). */
const sourcesIn = (file: string) =>
  new Set([...readFileSync(join(DIST, file), "utf8").matchAll(/^\/\/ (src\/\S+\.ts)$/gm)].map((m) => m[1] as string));

const PROBE = (id: string) => `import { currentRunContext } from "gatehouse-runtime";
export default {
  id: "${id}",
  setup(api) {
    api.registerCommand("${id}", {
      description: "says whether the gatehouse it imported knows the run it is called in",
      run: (_args, ctx) => \`${id}: \${currentRunContext()?.runId === ctx.runId ? "same run context" : "another copy"}\`,
    });
  },
};
`;

describe("the built package", { skip: existsSync(BUILT_CLI) ? undefined : "run `npm run build` first" }, () => {
  const project = tempProjects();

  test("every source module is in exactly one built file: the CLI and the package entry share their chunks", () => {
    const homes = new Map<string, string[]>();
    for (const file of distScripts())
      for (const source of sourcesIn(file)) homes.set(source, [...(homes.get(source) ?? []), file]);
    assert.ok(homes.has("src/runtime/run.ts") && homes.has("src/hooks/run-context.ts"));
    const twice = [...homes].filter(([, files]) => files.length > 1);
    assert.deepEqual(twice, []);
  });

  test("a plugin importing gatehouse inside the built CLI gets the CLI's modules, as ES module or TypeScript", async () => {
    const dir = await project({
      "gatehouse.json": { plugins: [{ path: "./probe.mjs" }, { path: "./probe-ts.ts" }] },
    });
    await put(dir, "probe.mjs", PROBE("probe"));
    await put(dir, "probe-ts.ts", PROBE("probe-ts"));
    await mkdir(join(dir, "node_modules"));
    await symlink(ROOT, join(dir, "node_modules", "gatehouse-runtime"), "dir");
    for (const command of ["probe", "probe-ts"]) {
      const r = await runBuilt(["run", "--model", "scripted:echo", "-p", `/${command}`], dir);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout.trim(), `${command}: same run context`);
    }
  });

  test("an OpenClaw plugin importing openclaw/plugin-sdk (not installed) gets the SDK shim from the built package", async () => {
    const dir = await project({
      "gatehouse.json": { plugins: [{ path: "./guard.mjs", hooks: { allowConversationAccess: true } }] },
    });
    await put(
      dir,
      "guard.mjs",
      `import { definePluginEntry } from "openclaw/plugin-sdk/plugin-entry";
export default definePluginEntry({
  id: "payroll-guard",
  name: "Payroll guard",
  description: "Sends payroll questions to HR.",
  register(api) {
    api.on("before_agent_run", (event) =>
      event.prompt.includes("payroll") ? { outcome: "block", reason: "hr", message: "Payroll questions go to HR." } : { outcome: "pass" });
  },
});
`,
    );
    const r = await runBuilt(["run", "--model", "scripted:echo", "-p", "a payroll question"], dir);
    assert.equal(r.stdout, "Payroll questions go to HR.\n", r.stderr);
    assert.equal(r.code, 3);
  });

  test("importing the package loads none of the heavy optional packages: they load when used", () => {
    const loaded = new Set<string>();
    const packages = new Set<string>();
    const visit = (file: string) => {
      if (loaded.has(file)) return;
      loaded.add(file);
      for (const specifier of staticImports(file)) {
        if (specifier.startsWith(".")) visit(join(dirname(file), specifier));
        else packages.add(specifier);
      }
    };
    visit("index.js");
    const heavy = [...packages].filter((p) =>
      /^(@modelcontextprotocol\/|@ai-sdk\/(openai|anthropic|openai-compatible)|jiti|pg|tinyglobby|picomatch|pino|fastify|@fastify\/|@opentelemetry\/|prom-client)/.test(
        p,
      ),
    );
    assert.deepEqual(heavy, []);
    assert.ok(packages.has("zod") && packages.has("better-sqlite3"), [...packages].join(", "));
  });

  test("gatehouse --version loads no chunk but the version, the exit codes and run's option list", async () => {
    const chunks = staticImports(join("cli", "main.js")).filter((s) => s.startsWith("."));
    const loaded = new Set(chunks.flatMap((chunk) => [...sourcesIn(join("cli", chunk))]));
    // run-command.ts is run's commander definition (commander and the exit codes only), which chat shares.
    assert.deepEqual([...loaded].sort(), ["src/cli/exit.ts", "src/cli/run-command.ts", "src/version.ts"]);
    const dir = await project();
    const r = await runBuilt(["--version"], dir);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^\d+\.\d+\.\d+\n$/);
  });
});
