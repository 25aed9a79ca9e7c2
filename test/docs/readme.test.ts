// "Every command in the README is executed by a test." The README's ```sh blocks are run in
// order, through the real CLI, in a fresh project folder (with its own empty home), offline:
//
// - `npx gatehouse …` lines are run; `echo TEXT | npx gatehouse …` gets TEXT and a newline on
//   stdin. A line's `# … exit status N` comment gives the expected status (default 0);
//   `# prints: TEXT` gives the expected output.
// - A block marked `<!-- file: NAME -->` (a plugin, a gatehouse.json, a hook script) is written
//   to NAME first, so later commands run against what the README shows. It is not run itself.
// - `chmod +x FILE` is applied to the file: the README tells the user to, so the test does too.
// - The one TypeScript block calling `createGatehouse(` (the library example) is run with tsx next
//   to the README's plugin, and must print the run's outcome and reply.
// - The block marked `<!-- provider example: … -->` is the real-provider example. Its
//   `export ANTHROPIC_API_KEY=...` gets a dummy key and its command runs against a local server
//   speaking Anthropic's Messages API (ANTHROPIC_BASE_URL points there): the test checks that
//   the model, the key and the prompt reached the server and that the server's reply is printed.
// - The block marked `<!-- console example -->` starts `gatehouse console` in the background (on a
//   free port, serving the console built from this checkout): the address it prints must answer
//   the console's page, and the API it reads must list the sessions the README made; then
//   SIGTERM, and it must exit 0.
// - The block marked `<!-- serve example -->` starts `gatehouse serve` in the background (on a free
//   port: GATEHOUSE_PORT=0); the TypeScript block marked `<!-- serve client -->` then runs with tsx
//   against it (its 127.0.0.1:8787 replaced by the address the server printed) and must print the
//   agent's reply; then the server gets SIGTERM and must exit 0.
//
// Not run here, and why (each must be `npm install`, `npm test` or `npm run SCRIPT` with
// SCRIPT in package.json, which is checked):
// - `npm install gatehouse-runtime`: test/package/pack.test.ts installs the packed package in an
//   empty project and runs `npx gatehouse` there, as a user would.
// - `npm install`, `npm run build`, `npm test`, `npm run lint`, `npm run typecheck`: CI's own
//   steps (.ci/run runs npm ci, lint, typecheck, build and npm test), and this test runs inside
//   `npm test`.
// - `npm run docs`: test/hooks/docs.test.ts fails when docs/hooks.md differs from what it
//   would write.
// - `npm run bench`: the benchmark files have no quick mode (each measures for a fixed number
//   of rounds sized for stable figures, on both cores); the lead runs them, not CI.
// Anything else the test cannot run fails it.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { after, before, describe, test } from "node:test";
import { installTestImports } from "../../scripts/on-demand.js";
import { gatehouse, MAIN, project } from "../cli/helpers.js";
import { builtConsole } from "../console/helpers.js";
import { codeBlocks, ROOT, type ShellCommand, shellCommands } from "../examples/readme-commands.js";
import { type MockServer, type SseFrame, startMockServer } from "../models/mock-server.js";

const README = join(ROOT, "README.md");
const PROVIDER = /^provider example: /;
const SERVE = "serve example";
const CONSOLE = "console example";
const NOT_RUN = new Set([
  "npm install",
  "npm install gatehouse-runtime",
  "npm run build",
  "npm test",
  "npm run lint",
  "npm run typecheck",
  "npm run docs",
  "npm run bench",
]);
const PROVIDER_REPLY = "README.md and package.json are here.";

/** What the test does with one README command line. */
type Step =
  | { kind: "gatehouse"; args: string[]; input?: string }
  | { kind: "chmod"; file: string }
  | { kind: "export"; name: string }
  | { kind: "npm"; line: string };

function stepOf(command: ShellCommand): Step | undefined {
  const argv = [...command.argv];
  const pipe = argv.indexOf("|");
  const input = argv[0] === "echo" && pipe > 0 ? `${argv.slice(1, pipe).join(" ")}\n` : undefined;
  const [first, second, ...rest] = input === undefined ? argv : argv.slice(pipe + 1);
  if (first === "npx" && second === "gatehouse") return { kind: "gatehouse", args: rest, ...(input ? { input } : {}) };
  if (input !== undefined) return undefined;
  if (first === "chmod" && second === "+x" && rest.length === 1) return { kind: "chmod", file: rest[0] as string };
  const exported = /^export (\w+)=/.exec(command.line)?.[1];
  if (exported) return { kind: "export", name: exported };
  if (first === "npm") return { kind: "npm", line: argv.join(" ") };
  return undefined;
}

/** Anthropic's streamed answer: one text block. */
function anthropicText(text: string): SseFrame[] {
  const ev = (type: string, data: Record<string, unknown> = {}): SseFrame => ({ event: type, data: { type, ...data } });
  return [
    ev("message_start", {
      message: {
        id: "msg_readme",
        type: "message",
        role: "assistant",
        content: [],
        model: "claude-sonnet-4-5",
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 12, output_tokens: 1 },
      },
    }),
    ev("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
    ev("content_block_delta", { index: 0, delta: { type: "text_delta", text } }),
    ev("content_block_stop", { index: 0 }),
    ev("message_delta", { delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 9 } }),
    ev("message_stop"),
  ];
}

/**
 * The serve example: `gatehouse serve` in the background, the README's OpenAI client against it,
 * then SIGTERM (a graceful stop exits 0).
 */
async function serveAndAsk(
  args: string[],
  dir: string,
  env: Record<string, string>,
  blocks: ReturnType<typeof codeBlocks>,
  home: string,
): Promise<void> {
  const client = blocks.find((b) => b.note === "serve client");
  assert.ok(client, "the README's OpenAI client example");
  assert.ok(client.content.trim().split("\n").length <= 3, "three lines");
  const child = spawn(process.execPath, ["--import", import.meta.resolve("tsx"), MAIN, ...args], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? "", ...env, GATEHOUSE_PORT: "0" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
  let stderr = "";
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr?.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
      const m = /serving on (http:\/\/\S+)/.exec(stderr);
      if (m) resolve(m[1] as string);
    });
    child.on("close", () => reject(new Error(`gatehouse serve exited: ${stderr}`)));
  });
  try {
    const app = join(dir, "serve-client");
    await mkdir(join(app, "node_modules"), { recursive: true });
    await writeFile(join(app, "package.json"), '{ "type": "module" }\n');
    await symlink(
      join(await installTestImports(), "node_modules", "openai"),
      join(app, "node_modules", "openai"),
      "dir",
    );
    await writeFile(join(app, "main.ts"), client.content.replace("http://127.0.0.1:8787", url));
    const run = spawnSync(process.execPath, ["--import", import.meta.resolve("tsx"), "main.ts"], {
      cwd: app,
      env: { ...process.env, HOME: home },
      encoding: "utf8",
    });
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout, "hello\n");
  } finally {
    child.kill("SIGTERM");
  }
  assert.equal(await exited, 0, stderr);
}

/** The console example: `gatehouse console` in the background; its page and the sessions it lists; SIGTERM. */
async function openConsole(args: string[], dir: string, env: Record<string, string>): Promise<void> {
  const child = spawn(process.execPath, ["--import", import.meta.resolve("tsx"), MAIN, ...args], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? "", ...env, GATEHOUSE_PORT: "0", GATEHOUSE_CONSOLE_ASSETS: await builtConsole() },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  const url = await new Promise<string>((resolve, reject) => {
    let stdout = "";
    child.stdout?.setEncoding("utf8").on("data", (d: string) => {
      stdout += d;
      const m = /^(http:\/\/\S+\/console\/)$/m.exec(stdout);
      if (m) resolve(m[1] as string);
    });
    child.on("close", () => reject(new Error(`gatehouse console exited: ${stderr}`)));
  });
  try {
    const page = await fetch(url);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<title>Gatehouse console<\/title>/);
    const sessions = (await (await fetch(new URL("/v1/sessions?scope=all", url))).json()) as { data: unknown[] };
    assert.ok(sessions.data.length > 0, "the sessions the README's runs made");
  } finally {
    child.kill("SIGTERM");
  }
  assert.equal(await exited, 0, stderr);
}

describe("README", () => {
  let markdown = "";
  let cwd = "";
  let home = "";
  let server: MockServer;
  let remove: () => Promise<void> = async () => {};
  before(async () => {
    markdown = await readFile(README, "utf8");
    const p = await project();
    cwd = p.dir;
    remove = p.remove;
    // The user's home is not the project: user-level hook settings are a different file.
    home = join(cwd, ".home");
    await mkdir(home);
    // `import { definePlugin } from "gatehouse-runtime"` in the README's plugin resolves to this package.
    await mkdir(join(cwd, "node_modules"));
    await symlink(ROOT, join(cwd, "node_modules", "gatehouse-runtime"), "dir");
    server = await startMockServer();
  });
  after(async () => {
    await server.close();
    await remove();
  });

  test("every command in the README runs, in order, with the documented result", async () => {
    const commands = shellCommands(markdown);
    const ran: string[] = [];
    for (const block of codeBlocks(markdown)) {
      const file = /^file: (\S+)$/.exec(block.note ?? "")?.[1];
      if (file) {
        await mkdir(dirname(join(cwd, file)), { recursive: true });
        await writeFile(join(cwd, file), block.content);
        continue;
      }
      const provider = block.note !== undefined && PROVIDER.test(block.note);
      const env: Record<string, string> = { HOME: home };
      for (const command of commands.filter((c) => c.block === block.index)) {
        const step = stepOf(command);
        assert.ok(step, `the test cannot run: ${command.line}`);
        const dir = join(cwd, command.dir);
        if (step.kind === "npm") continue; // checked below
        ran.push(command.line);
        if (step.kind === "chmod") {
          await chmod(join(dir, step.file), 0o755);
          continue;
        }
        if (step.kind === "export") {
          assert.ok(provider, `export outside the provider example: ${command.line}`);
          assert.equal(step.name, "ANTHROPIC_API_KEY", "the local server speaks Anthropic's API");
          env.ANTHROPIC_API_KEY = "sk-ant-readme-dummy";
          env.ANTHROPIC_BASE_URL = server.origin;
          continue;
        }
        if (block.note === SERVE) {
          await serveAndAsk(step.args, dir, env, codeBlocks(markdown), home);
          continue;
        }
        if (block.note === CONSOLE) {
          await openConsole(step.args, dir, env);
          continue;
        }
        if (provider) server.reply({ sse: anthropicText(PROVIDER_REPLY) });
        const requests = server.requests.length;
        const expected = Number(/exit status (\d+)/.exec(command.comment ?? "")?.[1] ?? 0);
        const r = await gatehouse(step.args, { cwd: dir, env, ...(step.input ? { input: step.input } : {}) });
        assert.equal(r.code, expected, `${command.line}\n${r.stderr}`);
        const prints = /^prints: (.*)$/.exec(command.comment ?? "")?.[1];
        if (prints !== undefined) assert.equal(r.stdout.trim(), prints, command.line);
        if (step.args[0] === "--version") assert.match(r.stdout, /^\d+\.\d+\.\d+/);
        if (provider) {
          assert.equal(r.stdout, `${PROVIDER_REPLY}\n`, command.line);
          const request = server.requests[requests];
          assert.equal(server.requests.length, requests + 1, "one model call");
          assert.equal(request?.path, "/v1/messages");
          assert.equal(request?.headers["x-api-key"], "sk-ant-readme-dummy");
          const model = step.args[step.args.indexOf("--model") + 1];
          assert.equal(`anthropic:${request?.body.model}`, model);
          const prompt = step.args[step.args.indexOf("-p") + 1] as string;
          assert.ok(JSON.stringify(request?.body.messages).includes(prompt), "the prompt reached the provider");
        }
      }
    }
    assert.ok(ran.length >= 20, `only ${ran.length} commands ran`);
    assert.ok(
      ran.some((line) => line.includes("anthropic:")),
      "the provider example ran",
    );
  });

  test("the library example runs as shown, with the README's plugin, and prints the run's outcome and reply", async () => {
    const blocks = codeBlocks(markdown);
    const policy = blocks.find((b) => b.note === "file: policy.ts");
    const library = blocks.filter((b) => b.lang === "ts" && b.content.includes("createGatehouse("));
    assert.ok(policy, "the README's plugin");
    assert.equal(library.length, 1, "one library example");
    // An application of the user's own: an ES module package (top-level await), beside the plugin.
    const app = join(cwd, "library-app");
    await mkdir(app, { recursive: true });
    await writeFile(join(app, "package.json"), '{ "type": "module" }\n');
    await writeFile(join(app, "policy.ts"), policy.content);
    await writeFile(join(app, "main.ts"), (library[0] as (typeof library)[number]).content);
    // A user runs it with their TypeScript runner; tsx here.
    const run = spawnSync(process.execPath, ["--import", import.meta.resolve("tsx"), "main.ts"], {
      cwd: app,
      env: { ...process.env, HOME: home },
      encoding: "utf8",
    });
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout, "completed hello\n");
  });

  test("the only commands not run are the developer's npm commands, each a real script", async () => {
    const scripts = Object.keys(
      (JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts,
    );
    const files = new Set(codeBlocks(markdown).flatMap((b) => (/^file: /.test(b.note ?? "") ? [b.index] : [])));
    const npm: string[] = [];
    for (const command of shellCommands(markdown)) {
      if (files.has(command.block)) continue;
      const step = stepOf(command);
      assert.ok(step, `the test cannot run: ${command.line}`);
      if (step.kind !== "npm") continue;
      npm.push(step.line);
      const [, verb, script] = command.argv;
      if (verb === "run")
        assert.ok(script !== undefined && scripts.includes(script), `npm run ${script} is not a script`);
      assert.ok(NOT_RUN.has(step.line), `an npm command this test's header does not account for: ${command.line}`);
    }
    assert.ok(npm.length > 0);
    const providers = codeBlocks(markdown).filter((b) => b.note !== undefined && PROVIDER.test(b.note));
    assert.equal(providers.length, 1, "one real-provider example");
  });

  test("every document and example the README links to exists", () => {
    const targets = [...markdown.matchAll(/\]\(((?:docs|examples)\/[^)#]*)\)/g)].map((m) => m[1] as string);
    assert.ok(targets.length > 10);
    for (const target of targets)
      assert.ok(existsSync(join(ROOT, target)), `README links to ${target}, which does not exist`);
  });
});
