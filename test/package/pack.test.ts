// The package as a user installs it: `npm pack` of the built package, installed from the tarball
// into a fresh TypeScript project (its dependencies from the npm cache or registry), where a plugin
// and a `createGatehouse` call type-check with `skipLibCheck: false` — the published declarations
// stand on the package's own dependencies (no devDependency's types), and `store: "memory"` is
// accepted as gatehouse.json spells it.
//
// Slow by nature (an npm install): its own file, a built dist/ needed (like test/cli/bundle.test.ts).
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { copyFile, mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { VERSION } from "../../src/version.js";

const run = promisify(execFile);

/**
 * npm as a user runs it: without the `npm_*` variables `npm test` hands its children (they point
 * npm at this repository's config and prefix). A failure carries npm's own error output.
 */
async function npm(
  args: readonly string[],
  cwd: string,
  { loglevel = "error", env: extra = {} }: { loglevel?: string; env?: Record<string, string> } = {},
): Promise<{ stdout: string; stderr: string }> {
  const env = { ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name))), ...extra };
  try {
    return await run("npm", [`--loglevel=${loglevel}`, ...args], { cwd, env, maxBuffer: 10 * 1024 * 1024 });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`npm ${args[0]} failed:\n${stderr ?? ""}${stdout ?? ""}`, { cause: error });
  }
}
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const BUILT = join(ROOT, "dist", "index.d.ts");
const devVersion = (name: string) =>
  (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { devDependencies: Record<string, string> })
    .devDependencies[name];

const PLUGIN = `import type { PluginDefinition } from "gatehouse-runtime";

const plugin: PluginDefinition<{ word?: string } | undefined> = {
  id: "no-rm",
  setup(api) {
    api.on("before_agent_run", (event) =>
      event.prompt.includes(api.config?.word ?? "secret")
        ? { outcome: "block", reason: "internal", message: "Not here." }
        : undefined,
    );
    api.on("before_tool_call", (event) =>
      event.toolName === "Bash" ? { block: true, blockReason: "no shell here" } : undefined,
    );
  },
};
export default plugin;
`;

const MAIN = `import { createGatehouse, type RunResult } from "gatehouse-runtime";
import plugin from "./plugin.js";

const gatehouse = createGatehouse({ model: "scripted:echo", store: "memory", plugins: [plugin] });
const result: RunResult = await gatehouse.run({ prompt: "hello" });
const outcome: string = result.outcome;
console.log(outcome);
await gatehouse.close();
`;

const TSCONFIG = {
  compilerOptions: {
    target: "ES2022",
    module: "NodeNext",
    moduleResolution: "NodeNext",
    strict: true,
    skipLibCheck: false,
    noEmit: true,
    types: ["node"],
  },
  include: ["*.ts"],
};

describe("the packed package in a fresh TypeScript project", {
  skip: existsSync(BUILT) ? undefined : "run `npm run build` first",
}, () => {
  let dir = "";
  after(() => (dir ? rm(dir, { recursive: true, force: true }) : undefined));

  test("installs from the tarball; a plugin and createGatehouse({ store: 'memory' }) type-check with skipLibCheck false", async () => {
    dir = await mkdtemp(join(tmpdir(), "gatehouse-pack-"));
    await npm(["pack", "--ignore-scripts", "--pack-destination", dir], ROOT);
    assert.deepEqual(
      (await readdir(dir)).filter((f) => f.endsWith(".tgz")),
      [`gatehouse-runtime-${VERSION}.tgz`],
      "the package is gatehouse-runtime",
    );
    const tarball = (await readdir(dir)).find((f) => f.endsWith(".tgz"));
    assert.ok(tarball, "npm pack wrote a tarball");
    const project = join(dir, "project");
    await run("mkdir", [project]);
    await writeFile(join(project, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
    await writeFile(join(project, "tsconfig.json"), JSON.stringify(TSCONFIG));
    await writeFile(join(project, "plugin.ts"), PLUGIN);
    await writeFile(join(project, "main.ts"), MAIN);
    // Scripts skipped: the one install script is better-sqlite3's native build, which is its own
    // business (and minutes of compiling here); the test below puts the same version's build in.
    // Warnings on: a dependency that does not support this Node (EBADENGINE) is what users see.
    const install = await npm(
      [
        "install",
        "--prefer-offline",
        "--ignore-scripts",
        "--no-audit",
        "--no-fund",
        join(dir, tarball),
        `typescript@${devVersion("typescript")}`,
        `@types/node@${devVersion("@types/node")}`,
      ],
      project,
      { loglevel: "warn" },
    );
    // The one dependency allowed to warn: the sandbox runtime declares Node >= 22.12 and is
    // tested on Node 20 (README); any other package that does not support this Node is a bug.
    const unsupported = [...install.stderr.matchAll(/EBADENGINE\s+package: '([^']+)'/g)].map((m) => m[1] ?? "");
    assert.deepEqual(
      unsupported.filter((pkg) => !pkg.startsWith("@anthropic-ai/sandbox-runtime@")),
      [],
      "every dependency but the sandbox runtime supports this Node",
    );
    const installed = JSON.parse(
      readFileSync(join(project, "node_modules", "gatehouse-runtime", "package.json"), "utf8"),
    );
    assert.equal(installed.name, "gatehouse-runtime");
    assert.ok(
      !existsSync(join(project, "node_modules", "@types", "better-sqlite3")),
      "no devDependency types installed",
    );
    const tsc = join(project, "node_modules", "typescript", "bin", "tsc");
    const checked = await run(process.execPath, [tsc, "-p", "."], { cwd: project }).then(
      () => ({ ok: true, out: "" }),
      (error: { stdout?: string; stderr?: string }) => ({
        ok: false,
        out: `${error.stdout ?? ""}${error.stderr ?? ""}`,
      }),
    );
    assert.ok(checked.ok, `tsc found errors in the consumer project:\n${checked.out}`);
  });

  test("the tarball carries the vendored Bash grammar: the package's #tree-sitter-bash.wasm import resolves inside it and parses a line", async () => {
    const project = join(dir, "project");
    const installed = join(project, "node_modules", "gatehouse-runtime");
    assert.ok(
      existsSync(join(installed, "vendor", "tree-sitter-bash", "tree-sitter-bash.wasm")),
      "the wasm is in the tarball",
    );
    // Resolved from the package's own dist/, as shell-parser.ts does there; loaded by the web-tree-sitter it depends on.
    await writeFile(
      join(project, "grammar.mjs"),
      `import { createRequire } from "node:module";
import { Language, Parser } from "web-tree-sitter";
const wasm = createRequire(${JSON.stringify(join(installed, "dist", "index.js"))}).resolve("#tree-sitter-bash.wasm");
await Parser.init();
const parser = new Parser();
parser.setLanguage(await Language.load(wasm));
console.log(wasm);
console.log(parser.parse("ls | wc -l").rootNode.toString());
`,
    );
    const { stdout } = await run(process.execPath, ["grammar.mjs"], { cwd: project });
    const [wasm, tree] = stdout.split("\n");
    assert.equal(wasm, join(installed, "vendor", "tree-sitter-bash", "tree-sitter-bash.wasm"));
    assert.match(tree ?? "", /^\(program \(pipeline \(command/);
  });

  test("a new user's first commands: npx gatehouse runs the installed bin at once, without npm installing anything", async () => {
    const project = join(dir, "project");
    assert.ok(existsSync(join(project, "node_modules", ".bin", "gatehouse")), "the first test installed the package");
    // better-sqlite3's native build, as its install script would have made it (same version).
    const sqlite = (root: string) => join(root, "node_modules", "better-sqlite3");
    const version = (root: string) =>
      (JSON.parse(readFileSync(join(sqlite(root), "package.json"), "utf8")) as { version: string }).version;
    assert.equal(version(project), version(ROOT));
    await mkdir(join(sqlite(project), "build", "Release"), { recursive: true });
    await copyFile(
      join(sqlite(ROOT), "build", "Release", "better_sqlite3.node"),
      join(sqlite(project), "build", "Release", "better_sqlite3.node"),
    );
    // npm's own cache, empty: `npx` would put a copy of anything it had to install under _npx/.
    const cache = join(dir, "npm-cache");
    const npx = (args: string[]) =>
      run("npx", args, {
        cwd: project,
        env: {
          ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name))),
          npm_config_cache: cache,
          npm_config_offline: "true",
        },
      });
    assert.equal((await npx(["gatehouse", "--version"])).stdout.trim(), VERSION);
    const reply = await npx(["gatehouse", "run", "--model", "scripted:echo", "-p", "hi"]);
    assert.equal(reply.stdout, "hi\n");
    assert.equal(existsSync(join(cache, "_npx")), false, "npx installed nothing: it ran node_modules/.bin/gatehouse");
  });

  test("no declaration the package entry reaches imports a driver's types (they are devDependencies)", () => {
    const dist = join(ROOT, "dist");
    const reached = new Set<string>();
    const queue = ["index.d.ts"];
    for (let file = queue.pop(); file !== undefined; file = queue.pop()) {
      if (reached.has(file)) continue;
      reached.add(file);
      const text = readFileSync(join(dist, file), "utf8");
      for (const m of text.matchAll(/(?:from\s+|import\()\s*"(\.[^"]+)\.js"/g))
        queue.push(join(dirname(file), `${m[1]}.d.ts`));
    }
    assert.ok(reached.size > 20, `the walk found the declarations (${reached.size})`);
    const driverTypes = [...reached].filter((f) =>
      /(?:from\s+|import\()\s*"(?:better-sqlite3|pg)"/.test(readFileSync(join(dist, f), "utf8")),
    );
    assert.deepEqual(driverTypes, []);
  });
});
