// Packages a contributor's `npm install` does not download: the linter (one native binary of
// ~96 MB), the heavy packages only some tests run (real hook packages) and the host SDKs and
// clients only some tests import (TEST_IMPORTS: the openai client, the OpenAI Agents SDK, the AI
// SDK, OpenTelemetry's tracer provider, playwright-core). Whoever needs one installs it here, once,
// on first use (pinned versions, npm's cache behind it).
//
//   tsx scripts/on-demand.ts PACKAGE BIN [ARGS...]     runs BIN of PACKAGE (npm run lint does)
//   tsx scripts/on-demand.ts --test-imports            installs TEST_IMPORTS (npm run typecheck does)
import { execFile, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rename, rm, symlink, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { npmInstallArgs } from "../src/command-hooks/claude-plugins.js";

/** The pinned versions: the one place they are written. */
export const ON_DEMAND = {
  "@biomejs/biome": "2.6.8",
  "@code-yeongyu/comment-checker": "0.8.0",
  "cc-safety-net": "2.4.5",
  vibesafu: "0.1.27",
  // OpenClaw plugins (issue 29): oh-my-openclaw, and openclaw-mem0 with the mem0ai SDK behind it.
  "@happycastle/oh-my-openclaw": "0.21.3",
  "@mem0/openclaw-mem0": "1.0.16",
  // Claude Code plugins (a marketplace at the package root) and hook packages of issue 29.
  "ecc-universal": "2.0.0",
  "selfish-pipeline": "1.3.0",
  "tdd-guard": "1.7.0",
  "gh-setup-hooks": "2.1.0",
  // What tests and the harness import (TEST_IMPORTS below).
  openai: "6.49.0",
  "@openai/agents": "0.14.3",
  ai: "6.0.333",
  "@opentelemetry/sdk-trace-base": "2.12.1",
  "playwright-core": "1.65.1",
} as const;
export type OnDemandPackage = keyof typeof ON_DEMAND;

/**
 * The packages tests (and the harness) import rather than run. They are installed together, in
 * one folder, so they share one copy of what they have in common (the Agents SDK is handed the very
 * `openai` client a test builds, and its types must be that client's), and tsc reads their types
 * there: tsconfig.test.json's `paths` point at `node_modules/.cache/gatehouse-test-hooks/imports/`,
 * a link to the folder of the current pins, which `npm run typecheck` installs first.
 */
export const TEST_IMPORTS = [
  "openai",
  "@openai/agents",
  "ai",
  "@opentelemetry/sdk-trace-base",
  "playwright-core",
] as const satisfies readonly OnDemandPackage[];
export type TestImport = (typeof TEST_IMPORTS)[number];

const CACHE = fileURLToPath(new URL("../node_modules/.cache/gatehouse-test-hooks/", import.meta.url));

/** The folder `name` is installed in (its node_modules/ and node_modules/.bin/ are inside). */
const home = (name: OnDemandPackage) => join(CACHE, `${name.replace("/", "+")}@${ON_DEMAND[name]}`);

/**
 * Installs `name` at its pinned version unless it is there, and returns its install folder.
 * `npm install` runs into a temporary folder renamed into place, so concurrent callers never see
 * half an install; scripts stay off (a package's own installer is not what we run).
 */
export async function installOnDemand(name: OnDemandPackage): Promise<string> {
  const target = home(name);
  const done = join(target, "node_modules", name, "package.json");
  if (!existsSync(done)) await installInto(target, done, [`${name}@${ON_DEMAND[name]}`]);
  return target;
}

/**
 * Installs `specs` (name@version) into a staging folder renamed to `target` once complete (`done`
 * is the file that says it is), unless another caller got there first.
 */
async function installInto(
  target: string,
  done: string,
  specs: readonly string[],
  finish?: (staging: string) => Promise<void>,
): Promise<void> {
  await mkdir(CACHE, { recursive: true });
  const staging = await mkdtemp(join(CACHE, ".staging-"));
  // npm_* variables of an enclosing `npm run` would point this install at the repository.
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key)));
  const [first, ...rest] = specs;
  try {
    await promisify(execFile)("npm", [...npmInstallArgs(staging, first ?? ""), ...rest], {
      env,
      maxBuffer: 10 * 1024 * 1024,
    });
    await finish?.(staging);
    await rename(staging, target).catch((error: NodeJS.ErrnoException) => {
      // Another caller finished first: its install is the same packages.
      if (!existsSync(done)) throw error;
    });
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/**
 * What the TEST_IMPORTS install holds: them, and the project's own copies of what they expect the
 * caller to have (peer dependencies) and tests hand them: a zod schema for an Agents SDK tool, a
 * tracer provider registered with the project's OpenTelemetry API. The versions of those come
 * from package.json's dependencies.
 */
function testImportSpecs(): string[] {
  const project = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
    dependencies: Record<string, string>;
  };
  const shared = ["zod", "@opentelemetry/api"].map((name) => `${name}@${project.dependencies[name]}`);
  return [...TEST_IMPORTS.map((name) => `${name}@${ON_DEMAND[name]}`), ...shared];
}

/** The TEST_IMPORTS folder of the current versions (a change of version is a new folder). */
const importsHome = join(
  CACHE,
  `imports@${createHash("sha256").update(JSON.stringify(testImportSpecs())).digest("hex").slice(0, 12)}`,
);
/** The loader written into that folder: an `import()` there resolves the names from its own node_modules. */
const LOADER = "import-on-demand.mjs";

/**
 * Installs TEST_IMPORTS (together) unless they are there, and points the `imports` link (the one
 * tsconfig.test.json names) at them: a new link renamed over the old, so a reader sees one or the other.
 */
export async function installTestImports(): Promise<string> {
  const loader = join(importsHome, LOADER);
  if (!existsSync(loader))
    await installInto(importsHome, loader, testImportSpecs(), (staging) =>
      writeFile(join(staging, LOADER), "export const load = (name) => import(name);\n"),
    );
  const link = join(CACHE, "imports");
  if (realpathOr(link) !== importsHome) {
    const fresh = join(CACHE, `.link-${process.pid}-${Date.now()}`);
    await symlink(basename(importsHome), fresh, "dir");
    await rename(fresh, link);
  }
  return importsHome;
}

/**
 * The module `name` (one of TEST_IMPORTS), installed first if needed. Its type comes from the
 * caller, as `importOnDemand<typeof import("openai")>("openai")`: a type-only import, which
 * tsc resolves through tsconfig.test.json's `paths` and which leaves nothing behind to load.
 */
export async function importOnDemand<Module>(name: TestImport): Promise<Module> {
  const loader = pathToFileURL(join(await installTestImports(), LOADER)).href;
  const { load } = (await import(loader)) as { load: (name: string) => Promise<Module> };
  return load(name);
}

/**
 * Packages a test unpacks rather than installs: OpenClaw itself (~95 MB packed), whose bundled
 * extensions test/plugins/openclaw-bundled.test.ts loads as they ship. Beside it go only the
 * runtime dependencies its extensions' shared chunks import (`with`, at the versions OpenClaw's
 * package.json pins), not its whole dependency tree.
 */
export const ON_DEMAND_TARBALLS = {
  openclaw: {
    version: "2026.9.6",
    with: [
      "typebox",
      "@openclaw/fs-safe",
      "@openclaw/ai",
      "@openclaw/proxyline",
      "chalk",
      "execa",
      "tslog",
      "import-meta-resolve",
      "p-map",
      "p-limit",
      "json5",
      "dotenv",
      "minimatch",
      "acorn",
      "hosted-git-info",
      "ignore",
      "rastermill",
      "node-edge-tts",
    ],
  },
} as const;
export type OnDemandTarball = keyof typeof ON_DEMAND_TARBALLS;

/**
 * The unpacked `package/` folder of `name` at its pinned version, its `with` dependencies in the
 * `node_modules/` beside it: `npm pack`, `tar` and `npm install` into a temporary folder renamed
 * into place, once, as installOnDemand does.
 */
export async function unpackOnDemand(name: OnDemandTarball): Promise<string> {
  const { version, with: dependencies } = ON_DEMAND_TARBALLS[name];
  // The dependency list is part of the name: a changed list is a new unpack, not a stale one.
  const listed = createHash("sha256").update(dependencies.join(",")).digest("hex").slice(0, 8);
  const target = join(CACHE, `${name}@${version}-tarball-${listed}`);
  const unpacked = join(target, "package");
  const done = join(target, ".complete");
  if (existsSync(done)) return unpacked;
  await mkdir(CACHE, { recursive: true });
  const staging = await mkdtemp(join(CACHE, ".staging-"));
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key)));
  const run = (file: string, args: string[]) =>
    promisify(execFile)(file, args, { env, maxBuffer: 64 * 1024 * 1024, cwd: staging });
  try {
    const { stdout } = await run("npm", ["pack", `${name}@${version}`, "--pack-destination", staging, "--json"]);
    const [{ filename }] = JSON.parse(stdout) as [{ filename: string }];
    await run("tar", ["xzf", join(staging, filename), "-C", staging]);
    await rm(join(staging, filename));
    const pinned = (
      JSON.parse(await readFile(join(staging, "package", "package.json"), "utf8")) as {
        dependencies: Record<string, string>;
      }
    ).dependencies;
    const specs = dependencies.map((d) => `${d}@${pinned[d]}`);
    const [install, ...rest] = npmInstallArgs(staging, specs[0] as string);
    await run("npm", [install as string, ...rest, ...specs.slice(1)]);
    await writeFile(join(staging, ".complete"), "");
    await rename(staging, target).catch((error: NodeJS.ErrnoException) => {
      if (!existsSync(done)) throw error;
    });
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  return unpacked;
}

/** The bin folder (with a trailing slash) of an on-demand package, installed if needed. */
export const onDemandBin = async (name: OnDemandPackage) =>
  `${join(await installOnDemand(name), "node_modules", ".bin")}/`;

/** The folder of the package itself (its package.json inside), installed if needed. */
export const onDemandPackage = async (name: OnDemandPackage) =>
  join(await installOnDemand(name), "node_modules", ...name.split("/"));

const isKnown = (name: string | undefined): name is OnDemandPackage => name !== undefined && name in ON_DEMAND;

function realpathOr(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (process.argv[2] === "--test-imports") {
    await installTestImports();
    process.exit(0);
  }
  const [name, bin, ...args] = process.argv.slice(2);
  if (!isKnown(name) || bin === undefined) {
    console.error(
      `usage: tsx scripts/on-demand.ts PACKAGE BIN [ARGS...]; PACKAGE is one of ${Object.keys(ON_DEMAND).join(", ")}`,
    );
    process.exit(2);
  }
  const folder = await onDemandBin(name);
  const result = spawnSync(join(folder, bin), args, { stdio: "inherit" });
  if (result.error) throw result.error;
  process.exit(result.status ?? 1);
}
