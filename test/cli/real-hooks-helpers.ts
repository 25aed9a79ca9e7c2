// The published hook packages the real-hooks tests run, and how their docs wire them.
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { npmInstallArgs } from "../../src/command-hooks/claude-plugins.js";

/** This repository's node_modules, where the packages are installed as devDependencies. */
export const MODULES = fileURLToPath(new URL("../../node_modules/", import.meta.url));
export const BIN = join(MODULES, ".bin/");

/**
 * Packages too heavy to be devDependencies (a contributor's `npm install` would download them
 * for a few tests): the tests that run them install them here, once, on first use.
 * comment-checker bundles its Go binary for every platform (256 MB); openclaw-mem0 brings the
 * mem0ai SDK and its dependencies.
 */
export const ON_DEMAND = {
  "@code-yeongyu/comment-checker": "0.8.0",
  "@happycastle/oh-my-openclaw": "0.21.3",
  "@mem0/openclaw-mem0": "1.0.16",
  // Claude Code plugins (a marketplace at the package root) and hook packages of issue 29.
  "ecc-universal": "2.0.0",
  "selfish-pipeline": "1.3.0",
  "tdd-guard": "1.7.0",
  "gh-setup-hooks": "2.1.0",
} as const;
const CACHE = join(MODULES, ".cache", "gatehouse-test-hooks");

/**
 * The folder `name@version` is installed in, in the test cache (its `node_modules` holds the
 * package): `npm install` into a temporary folder renamed into place, so concurrent test files
 * never see half an install; scripts off, as the package's own installer is not what the tests
 * exercise. npm uses its cache, so only the first run on a machine downloads.
 */
export async function onDemandBin(name: keyof typeof ON_DEMAND): Promise<string> {
  return join(await onDemandPackage(name), "..", ...(name.includes("/") ? [".."] : []), ".bin/");
}

/** The folder of `name@version` installed in the test cache (see onDemandBin). */
export async function onDemandPackage(name: keyof typeof ON_DEMAND): Promise<string> {
  const version = ON_DEMAND[name];
  const home = join(CACHE, `${name.replace("/", "+")}@${version}`);
  const folder = join(home, "node_modules", ...name.split("/"));
  if (existsSync(folder)) return folder;
  await mkdir(CACHE, { recursive: true });
  const staging = await mkdtemp(join(CACHE, ".staging-"));
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key)));
  try {
    await promisify(execFile)("npm", npmInstallArgs(staging, `${name}@${version}`), {
      env,
      maxBuffer: 10 * 1024 * 1024,
    });
    await rename(staging, home).catch((error: NodeJS.ErrnoException) => {
      // Another test file finished first: its install is the same package.
      if (!existsSync(folder)) throw error;
    });
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  return folder;
}

/** One tool call, then a reply that repeats what the model read back from it. */
export const oneCall = (name: string, input: Record<string, unknown>) => ({
  runs: [{ turns: [{ toolCalls: [{ name, input }] }, { text: "model read: {{lastToolResult}}" }] }],
});

/**
 * A Claude Code settings file with one tool-event group, and the permission rules a Claude Code
 * user would have for the tools the scripted model calls (nobody can approve a call in these
 * runs; a Gatehouse without permission rules ignores them).
 */
export const settings = (event: string, matcher: string, command: string, allow: string[] = []) => ({
  ...(allow.length > 0 ? { permissions: { allow } } : {}),
  hooks: { [event]: [{ matcher, hooks: [{ type: "command", command }] }] },
});

/**
 * claude-qol's auto-approve hook laid out as its installer does (hooks/ into .claude/scripts/;
 * the installer itself is denied in allowScripts), wired as its README says.
 */
export const claudeQol = (command: string) => {
  const installed = (file: string) => readFileSync(join(MODULES, "@torka/claude-qol/hooks", file), "utf8");
  return {
    "s.json": oneCall("Bash", { command }),
    "gatehouse.json": { model: "scripted:s.json" },
    "deploy.sh": "touch deployed\n",
    ".claude/scripts/auto_approve_safe.py": installed("auto_approve_safe.py"),
    ".claude/scripts/auto_approve_safe.rules.json": installed("auto_approve_safe.rules.json"),
    ".claude/settings.local.json": settings(
      "PreToolUse",
      "Bash|Read|Grep|Glob|Write|Edit|MultiEdit",
      'python3 "$CLAUDE_PROJECT_DIR"/.claude/scripts/auto_approve_safe.py',
    ),
  };
};

/** What claude-qol's hook decided, from the log it keeps in the project's .claude/ (on by default). */
export const qolDecisions = (cwd: string) =>
  readFileSync(join(cwd, ".claude/auto_approve_safe.decisions.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { decision: string }).decision);

/** The folder an on-demand package is installed under (its `node_modules` holds the package): a project that uses it. */
export async function onDemandHome(name: keyof typeof ON_DEMAND): Promise<string> {
  const folder = await onDemandPackage(name);
  return join(folder, "..", ...(name.includes("/") ? [".."] : []), "..");
}
