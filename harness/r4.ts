import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { forScenario } from "./random.js";

/**
 * R4 — bad input. A corpus of malformed inputs generated from data: valid documents
 * (gatehouse.json, .claude/settings.json, a scripted model file, a plugin module, CLI flags)
 * and mutation families applied to them. Each case runs the real CLI in a fresh project that
 * already holds one stored session, and must exit 2 with a clear error naming the file (and
 * the field, when the input has one), print no stack trace, and leave the store unchanged.
 *
 * Not in the corpus, by decision (harness/README.md says why): an oversized prompt, and
 * malformed plugin hook *results*, which are R2's faults.
 * Oversized files: no size limit exists for gatehouse.json / settings / scripted files, so a
 * 20 MB file is read whole; the cases make it invalid (garbage, or a bad field at the end), and
 * expect the same clear error and exit 2 a small file gets.
 */

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const MCP_FIXTURE = join(ROOT, "test/cli/fixtures/mcp-echo.mjs");
const TSX = import.meta.resolve("tsx");

export interface R4Case {
  readonly family: string;
  readonly name: string;
  /** Files written over the base project (a `null` removes the base file). */
  readonly files?: Readonly<Record<string, string | Buffer | null>>;
  /** CLI arguments; default: `run -p hello --session s1 --data-dir data`. */
  readonly args?: readonly string[];
  /** What stderr must name: a file's basename, and the field path when the input has one. */
  readonly file?: string;
  readonly field?: string;
  /** A known gap: reported, not failed. */
  readonly todo?: string;
}

export interface R4Result {
  readonly case: R4Case;
  readonly ok: boolean;
  readonly problems: readonly string[];
  readonly code: number | null;
  readonly stderr: string;
  readonly ms: number;
}

export interface R4Figures {
  readonly cases: number;
  readonly passed: number;
  readonly todo: number;
  readonly failed: readonly R4Result[];
  readonly results: readonly R4Result[];
  readonly byFamily: Record<string, number>;
  readonly ms: number;
}

// ---------------------------------------------------------------- valid documents

export const BASE_CONFIG = {
  $schema: "./schema/gatehouse.schema.json",
  $comment: "R4 base",
  model: "scripted:script.json",
  plugins: [
    {
      path: "./plugin.mjs",
      enabled: true,
      config: { greeting: "hi" },
      hooks: {
        allowConversationAccess: true,
        allowPromptInjection: false,
        timeoutMs: 5000,
        timeouts: { before_agent_run: 2000 },
        failOpen: false,
      },
    },
  ],
  hooks: {
    PreToolUse: [
      { matcher: "Echo|Bash", hooks: [{ type: "command", command: "true", timeout: 10, onFailure: "block" }] },
    ],
  },
  hookTimeouts: { timeoutMs: 5000 },
  commandHooks: { dialects: { project: "claude" }, onFailure: "block", passEnv: ["R4_VAR"] },
  mcpServers: { echo: { command: process.execPath, args: [MCP_FIXTURE] } },
  tools: { allow: ["*"], deny: ["Bash"] },
  store: "data/gatehouse.db",
  maxSteps: 5,
  systemPrompt: "Be brief.",
  compaction: { contextTokens: 100000, keepRecent: 6 },
};

export const BASE_SETTINGS = {
  hooks: {
    PostToolUse: [
      {
        matcher: "Read",
        hooks: [
          { type: "command", command: "true", timeout: 5, shell: "sh" },
          { type: "http", url: "http://127.0.0.1:9/hook", headers: { "X-A": "b" }, timeout: 5 },
        ],
      },
    ],
  },
};

export const BASE_SCRIPT = {
  runs: [
    { match: "hello|seed", turns: [{ text: "hi {{prompt}}", chunks: 2, usage: { inputTokens: 3, outputTokens: 2 } }] },
    {
      match: "^never$",
      turns: [
        { toolCalls: [{ name: "Read", input: { file_path: "x" }, id: "c1" }] },
        { error: { message: "boom", statusCode: 500, isRetryable: false } },
      ],
    },
  ],
};

export const BASE_PLUGIN = `export default {
  id: "base",
  name: "R4 base plugin",
  setup(api) {
    api.on("before_agent_run", () => ({ outcome: "pass" }));
  },
};
`;

/**
 * The project every case starts from. Its gatehouse.json has no MCP server: starting one costs
 * a process per case that gets past the configuration. The mutations of gatehouse.json start
 * from all of BASE_CONFIG, and the control run checks that BASE_CONFIG, server included, runs.
 */
const baseFiles = ({ mcp = false } = {}): Record<string, string> => ({
  "gatehouse.json": JSON.stringify(mcp ? BASE_CONFIG : { ...BASE_CONFIG, mcpServers: undefined }, null, 2),
  ".claude/settings.json": JSON.stringify(BASE_SETTINGS, null, 2),
  "script.json": JSON.stringify(BASE_SCRIPT, null, 2),
  "plugin.mjs": BASE_PLUGIN,
});

// ---------------------------------------------------------------- mutation helpers

type Path = readonly (string | number)[];
type Json = unknown;

/** `a.b[0]["X-A"]`, as the loaders print paths. */
function showPath(path: Path): string {
  let out = "";
  for (const k of path)
    out +=
      typeof k === "number"
        ? `[${k}]`
        : !/^[A-Za-z_$][\w$]*$/.test(k)
          ? `[${JSON.stringify(k)}]`
          : out === ""
            ? k
            : `.${k}`;
  return out;
}

function clone<T>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}

function setAt(doc: Json, path: Path, value: Json): Json {
  const copy = clone(doc) as Record<string | number, Json>;
  let node = copy;
  for (const k of path.slice(0, -1)) node = node[k] as Record<string | number, Json>;
  const last = path[path.length - 1] as string | number;
  node[last] = value;
  return copy;
}

/** Every node of a JSON document, with its path (not the root). */
function nodes(doc: Json, path: Path = [], skip: (p: Path) => boolean = () => false): [Path, Json][] {
  const out: [Path, Json][] = [];
  const walk = (v: Json, p: Path) => {
    if (p.length > 0) {
      if (skip(p)) return;
      out.push([p, v]);
    }
    if (Array.isArray(v)) for (const [i, x] of v.entries()) walk(x, [...p, i]);
    else if (v !== null && typeof v === "object") for (const [k, x] of Object.entries(v)) walk(x, [...p, k]);
  };
  walk(doc, path);
  return out;
}

function wrongType(v: Json): Json {
  if (typeof v === "string") return 42;
  if (typeof v === "number") return "5";
  if (typeof v === "boolean") return "yes";
  if (Array.isArray(v)) return { "0": v[0] ?? "x" };
  return ["x"];
}

const pretty = (v: Json) => JSON.stringify(v, null, 2);

/** Syntax mutations of a JSON text: truncations, trailing comma, comments, single quotes, BOM + garbage, binary. */
function syntaxMutations(text: string, seed: number): [string, string | Buffer][] {
  const rnd = forScenario(seed, 4);
  const out: [string, string | Buffer][] = [];
  for (const f of [0.1, 0.35, 0.6, 0.9])
    out.push([`truncated at ${Math.round(f * 100)}%`, text.slice(0, Math.floor(text.length * f))]);
  out.push(["trailing comma", text.replace(/\n}\s*$/, ",\n}\n")]);
  out.push(["a // comment", text.replace("{", "{\n  // a comment\n")]);
  out.push(["a /* comment */", text.replace("{", "{ /* a comment */")]);
  out.push(["single quotes", text.replace(/"/g, "'")]);
  out.push(["unquoted keys", text.replace(/"([A-Za-z$_]+)":/g, "$1:")]);
  out.push(["BOM + garbage", `\uFEFF@@garbage ${text}`]);
  out.push([
    "NUL bytes",
    Buffer.concat([Buffer.from(text.slice(0, 20)), Buffer.alloc(64), Buffer.from(text.slice(20))]),
  ]);
  out.push(["random bytes", Buffer.from(Array.from({ length: 4096 }, () => rnd.int(0, 255)))]);
  out.push(["empty file", ""]);
  out.push(["not an object (array)", "[]"]);
  out.push(["not an object (number)", "42"]);
  out.push(["UTF-16 LE", Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, "utf16le")])]);
  return out;
}

const OVERSIZE = 20 * 1024 * 1024;

/** Union-typed fields (a string or an object): zod reports the union, not the member's field. */
const UNION_FIELDS = /^(runs\[1\]\.turns\[1\]\.error)\..*$/;

// ---------------------------------------------------------------- the corpus

const RUN = ["run", "-p", "hello", "--session", "s1", "--data-dir", "data"];

export function r4Corpus(seed = 1130): R4Case[] {
  const cases: R4Case[] = [];
  const add = (c: R4Case) => cases.push(c);
  const config = (family: string, name: string, doc: Json, field?: string) =>
    add({
      family,
      name,
      files: { "gatehouse.json": pretty(doc) },
      file: "gatehouse.json",
      ...(field ? { field } : {}),
    });

  // gatehouse.json: a wrong type at every field (and null), except where any value is allowed.
  const freeform = (p: Path) => p[p.length - 1] === "config" || showPath(p).startsWith("$comment");
  for (const [p, v] of nodes(BASE_CONFIG, [], freeform)) {
    const at = showPath(p);
    config("config: wrong type", `${at} = ${JSON.stringify(wrongType(v))}`, setAt(BASE_CONFIG, p, wrongType(v)), at);
    if (v !== null && typeof v !== "object")
      config("config: wrong type", `${at} = null`, setAt(BASE_CONFIG, p, null), at);
  }
  // gatehouse.json: an unknown key at every object level that is not a free map.
  const maps = new Set(["hooks", "mcpServers", "hooks.PreToolUse[0].hooks[0]"]);
  for (const [p, v] of [[[], BASE_CONFIG] as [Path, Json], ...nodes(BASE_CONFIG, [], freeform)]) {
    if (v === null || typeof v !== "object" || Array.isArray(v) || maps.has(showPath(p))) continue;
    if (showPath(p).endsWith("timeouts") || showPath(p).startsWith("commandHooks.dialects")) continue;
    const key = [...p, "bogusKey"];
    config("config: unknown key", `${showPath(key)}`, setAt(BASE_CONFIG, key, 1), showPath(key));
  }
  // An unknown key in a hook's matcher group or handler is not bad input: Claude Code ignores it,
  // and so does Gatehouse, with a warning (`hooks check` lists it; test/cli/claude-settings-accepted.test.ts).
  // Out-of-range numbers.
  const ranges: [Path, Json[]][] = [
    [["maxSteps"], [0, -1, 1001, 2.5, 1e9]],
    [
      ["plugins", 0, "hooks", "timeoutMs"],
      [0, -1, 1e9, 1.5],
    ],
    [
      ["plugins", 0, "hooks", "timeouts", "before_agent_run"],
      [0, -1, 1e9],
    ],
    [
      ["hookTimeouts", "timeoutMs"],
      [0, -1, 1e9],
    ],
    [
      ["hooks", "PreToolUse", 0, "hooks", 0, "timeout"],
      [0, -1],
    ],
    [
      ["compaction", "contextTokens"],
      [0, -1, 1.5],
    ],
    [
      ["compaction", "keepRecent"],
      [-1, 0.5],
    ],
  ];
  for (const [p, values] of ranges)
    for (const x of values)
      config("config: out of range", `${showPath(p)} = ${x}`, setAt(BASE_CONFIG, p, x), showPath(p));
  // Invalid enum values and names.
  const enums: [Path, Json, string?][] = [
    [["commandHooks", "onFailure"], "sometimes"],
    [["commandHooks", "dialects", "project"], "klingon"],
    [["commandHooks", "dialects", "nowhere"], "claude"],
    [["hooks", "PreToolUse", 0, "hooks", 0, "onFailure"], "maybe"],
    [["hooks", "PreToolUse", 0, "hooks", 0, "type"], "bogus"],
    [["hooks", "PreToolUse", 0, "hooks", 0, "shell"], "fish"],
    [["mcpServers", "echo", "type"], "carrier-pigeon"],
    [["mcpServers", "echo", "type"], "http"],
    [["plugins", 0, "hooks", "timeouts", "before_agent_rum"], 1000],
    [["plugins", 0, "hooks", "failOpen"], ["no_such_hook"]],
    [["store"], "mysql://localhost/db"],
    [["store"], ""],
    [["model"], "nope:x"],
    [["model"], "scripted:"],
    [["model"], ""],
  ];
  for (const [p, x, field] of enums)
    config(
      "config: bad enum or name",
      `${showPath(p)} = ${JSON.stringify(x)}`,
      setAt(BASE_CONFIG, p, x),
      field ?? showPath(p),
    );
  // Cross-field rules.
  config(
    "config: bad enum or name",
    "plugins[0]: path and package",
    setAt(BASE_CONFIG, ["plugins", 0, "package"], "x"),
    "plugins[0]",
  );
  const noPath = clone(BASE_CONFIG) as { plugins: Record<string, Json>[] };
  delete noPath.plugins[0]?.path;
  config("config: bad enum or name", "plugins[0]: neither path nor package", noPath, "plugins[0]");
  config(
    "config: bad enum or name",
    "mcpServers.echo: command and url",
    setAt(BASE_CONFIG, ["mcpServers", "echo", "url"], "http://x"),
    "mcpServers.echo",
  );
  config(
    "config: bad enum or name",
    "mcpServers.echo.url not http",
    setAt(BASE_CONFIG, ["mcpServers", "echo"], { url: "ftp://x" }),
    "mcpServers.echo.url",
  );
  config(
    "config: bad enum or name",
    "hooks http url not http",
    setAt(BASE_CONFIG, ["hooks", "PreToolUse", 0, "hooks", 0], { type: "http", url: "file:///etc/passwd" }),
    "hooks.PreToolUse[0].hooks[0]",
  );
  config(
    "config: bad enum or name",
    "hooks command empty",
    setAt(BASE_CONFIG, ["hooks", "PreToolUse", 0, "hooks", 0, "command"], ""),
    "hooks.PreToolUse[0].hooks[0].command",
  );
  // Invalid regex matchers and unknown hook events.
  for (const m of ["(", "[a-", "+", "a{2,1}", "(?<x>a)(?<x>b)"]) {
    config(
      "hooks: bad matcher or event",
      `gatehouse.json matcher ${m}`,
      setAt(BASE_CONFIG, ["hooks", "PreToolUse", 0, "matcher"], m),
      "hooks.PreToolUse[0].matcher",
    );
    add({
      family: "hooks: bad matcher or event",
      name: `settings.json matcher ${m}`,
      files: { ".claude/settings.json": pretty(setAt(BASE_SETTINGS, ["hooks", "PostToolUse", 0, "matcher"], m)) },
      file: "settings.json",
      field: "hooks.PostToolUse[0].matcher",
    });
  }
  for (const e of ["PreToolUze", "preToolUse", "before_agent_run", "", "OnStart"]) {
    add({
      family: "hooks: bad matcher or event",
      name: `gatehouse.json event "${e}"`,
      files: { "gatehouse.json": pretty(setAt(BASE_CONFIG, ["hooks", e], BASE_CONFIG.hooks.PreToolUse)) },
      file: "gatehouse.json",
      field: "hooks",
    });
    add({
      family: "hooks: bad matcher or event",
      name: `settings.json event "${e}"`,
      files: { ".claude/settings.json": pretty(setAt(BASE_SETTINGS, ["hooks", e], BASE_SETTINGS.hooks.PostToolUse)) },
      file: "settings.json",
      field: "hooks",
    });
  }
  // .claude/settings.json: a wrong type at every field of the hooks block, unknown handler keys.
  for (const [p, v] of nodes(BASE_SETTINGS)) {
    const at = showPath(p);
    add({
      family: "settings: wrong type",
      name: at,
      files: { ".claude/settings.json": pretty(setAt(BASE_SETTINGS, p, wrongType(v))) },
      file: "settings.json",
      field: at,
    });
  }
  // The scripted model file: wrong types, unknown keys, bad templates and regexes, empty lists.
  const script = (name: string, doc: Json, field?: string) =>
    add({
      family: "scripted model file",
      name,
      files: { "script.json": pretty(doc) },
      file: "script.json",
      ...(field ? { field } : {}),
    });
  for (const [p, v] of nodes(BASE_SCRIPT, [], (q) => q.includes("input")))
    script(
      `${showPath(p)} = ${JSON.stringify(wrongType(v))}`,
      setAt(BASE_SCRIPT, p, wrongType(v)),
      showPath(p).replace(UNION_FIELDS, "$1"),
    );
  for (const p of [
    [],
    ["runs", 0],
    ["runs", 0, "turns", 0],
    ["runs", 1, "turns", 0, "toolCalls", 0],
    ["runs", 0, "turns", 0, "usage"],
    ["runs", 1, "turns", 1, "error"],
  ] as Path[])
    script(
      `unknown key at ${showPath(p) || "(top)"}`,
      setAt(BASE_SCRIPT, [...p, "bogusKey"], 1),
      showPath(p) || "bogusKey",
    );
  script("runs = []", { runs: [] }, "runs");
  script("runs[0].turns = []", setAt(BASE_SCRIPT, ["runs", 0, "turns"], []), "runs[0].turns");
  script("unknown template", setAt(BASE_SCRIPT, ["runs", 0, "turns", 0, "text"], "{{promt}}"), "runs[0].turns[0].text");
  script("bad match regex", setAt(BASE_SCRIPT, ["runs", 0, "match"], "(unclosed"), "runs[0].match");
  script(
    "statusCode 99",
    setAt(BASE_SCRIPT, ["runs", 1, "turns", 1, "error", "statusCode"], 99),
    "runs[1].turns[1].error",
  );
  script("chunks 0", setAt(BASE_SCRIPT, ["runs", 0, "turns", 0, "chunks"], 0), "runs[0].turns[0].chunks");
  script(
    "negative tokens",
    setAt(BASE_SCRIPT, ["runs", 0, "turns", 0, "usage", "inputTokens"], -3),
    "runs[0].turns[0].usage.inputTokens",
  );
  script(
    "image part without image/ type",
    setAt(BASE_SCRIPT, ["runs", 0, "turns", 0, "parts"], [{ type: "image", mediaType: "text/plain", data: "" }]),
    "runs[0].turns[0].parts[0]",
  );
  script(
    "tool call without name",
    setAt(BASE_SCRIPT, ["runs", 1, "turns", 0, "toolCalls", 0, "name"], ""),
    "runs[1].turns[0].toolCalls[0].name",
  );
  // JSON syntax, encodings and binary bytes, for each JSON input.
  for (const [file, text] of [
    ["gatehouse.json", baseFiles()["gatehouse.json"]],
    [".claude/settings.json", baseFiles()[".claude/settings.json"]],
    ["script.json", baseFiles()["script.json"]],
  ] as [string, string][])
    for (const [name, content] of syntaxMutations(text, seed))
      add({
        family: "JSON syntax and bytes",
        name: `${file}: ${name}`,
        files: { [file]: content },
        file: file.split("/").pop() ?? file,
      });
  // Oversized inputs (no size limit exists: the content decides).
  const big = (filler: string) => filler.repeat(Math.ceil(OVERSIZE / filler.length)).slice(0, OVERSIZE);
  const hugeComment = big("x");
  add({
    family: "oversized",
    name: "gatehouse.json 20 MB of garbage",
    files: { "gatehouse.json": big("garbage ") },
    file: "gatehouse.json",
  });
  add({
    family: "oversized",
    name: "gatehouse.json 20 MB, bad field at the end",
    files: { "gatehouse.json": pretty({ $comment: hugeComment, maxSteps: 0 }) },
    file: "gatehouse.json",
    field: "maxSteps",
  });
  add({
    family: "oversized",
    name: "gatehouse.json 20 MB of NUL",
    files: { "gatehouse.json": Buffer.alloc(OVERSIZE) },
    file: "gatehouse.json",
  });
  add({
    family: "oversized",
    name: "settings.json 20 MB, truncated",
    files: { ".claude/settings.json": `{"x": "${hugeComment}` },
    file: "settings.json",
  });
  add({
    family: "oversized",
    name: "script.json 20 MB, bad turn at the end",
    files: { "script.json": pretty({ runs: [{ turns: [{ text: hugeComment }, { chunks: -1 }] }] }) },
    file: "script.json",
    field: "runs[0].turns[1].chunks",
  });
  add({
    family: "oversized",
    name: "plugin module 20 MB of garbage",
    files: { "plugin.mjs": big("@@@ ") },
    file: "plugin.mjs",
  });
  // Plugin modules.
  // Problems inside a module are named by the module's file (the entry, plugins[0], is fine).
  const plugin = (name: string, body: string, todo?: string) =>
    add({
      family: "plugin modules",
      name,
      files: { "plugin.mjs": body },
      file: "plugin.mjs",
      ...(todo ? { todo } : {}),
    });
  plugin("throws at import", `throw new Error("plugin exploded at import");\n`);
  plugin("syntax error", "export default { id: 'x', setup( {\n");
  plugin("exports nothing", "const x = 1;\n");
  plugin("only a named export, no default", `export const plugin = { id: "base", setup() {} };\n`);
  plugin("default export is a number", "export default 42;\n");
  plugin("default export is a string", `export default "base";\n`);
  plugin("default export is null", "export default null;\n");
  plugin("default export is an array", `export default [{ id: "base", setup() {} }];\n`);
  plugin("default export is a bare setup function", "export default function setup(api) {}\n");
  plugin("default export has no setup", `export default { id: "base", name: "no setup" };\n`);
  plugin("setup is not a function", `export default { id: "base", setup: "nope" };\n`);
  plugin("no id", `export default { setup() {} };\n`);
  plugin("empty id", `export default { id: "", setup() {} };\n`);
  plugin("id is a number", `export default { id: 42, setup() {} };\n`);
  plugin("id is an object", `export default { id: { name: "base" }, setup() {} };\n`);
  plugin("id is null", `export default { id: null, setup() {} };\n`);
  plugin("name is not a string", `export default { id: "base", name: 7, setup() {} };\n`);
  plugin("setup throws", `export default { id: "base", setup() { throw new Error("setup exploded"); } };\n`);
  plugin("setup throws a non-error", `export default { id: "base", setup() { throw { code: 7 }; } };\n`);
  plugin("setup returns a teardown function", `export default { id: "base", setup() { return () => {}; } };\n`);
  plugin("setup returns a number", `export default { id: "base", setup() { return 42; } };\n`);
  plugin(
    "async setup resolves to an object",
    `export default { id: "base", async setup() { return { ok: true }; } };\n`,
  );
  plugin(
    "async setup rejects",
    `export default { id: "base", async setup() { throw new Error("async setup exploded"); } };\n`,
  );
  plugin(
    "registers an unknown hook",
    `export default { id: "base", setup(api) { api.on("before_agent_rum", () => ({ outcome: "pass" })); } };\n`,
  );
  plugin(
    "registers a non-function handler",
    `export default { id: "base", setup(api) { api.on("before_agent_run", 42); } };\n`,
  );
  plugin("imports a missing module", `import "./does-not-exist.mjs";\nexport default { id: "base", setup() {} };\n`);
  plugin("binary bytes", Buffer.from(Array.from({ length: 512 }, (_, i) => (i * 37) % 256)).toString("latin1"));
  add({ family: "plugin modules", name: "plugin file missing", files: { "plugin.mjs": null }, file: "plugin.mjs" });
  add({
    family: "plugin modules",
    name: "plugin package missing",
    files: {
      "gatehouse.json": pretty(setAt(BASE_CONFIG, ["plugins", 0], { package: "gatehouse-plugin-does-not-exist" })),
    },
    file: "gatehouse-plugin-does-not-exist",
  });
  add({
    family: "plugin modules",
    name: "two plugin files with the same id",
    files: {
      "gatehouse.json": pretty(
        setAt(
          BASE_CONFIG,
          ["plugins", 1],
          BASE_CONFIG.plugins[0] && { ...BASE_CONFIG.plugins[0], path: "./plugin2.mjs" },
        ),
      ),
      "plugin2.mjs": BASE_PLUGIN,
    },
    field: '"base"',
  });
  // CLI flags.
  const cli = (
    name: string,
    args: readonly string[],
    file?: string,
    field?: string,
    files?: Record<string, string | null>,
  ) =>
    add({
      family: "CLI flags",
      name,
      args,
      ...(file ? { file } : {}),
      ...(field ? { field } : {}),
      ...(files ? { files } : {}),
    });
  cli("unknown flag", [...RUN, "--bogus"], undefined, "--bogus");
  cli("unknown command", ["rnu", "-p", "hello"], undefined, "rnu");
  cli("unexpected argument", [...RUN, "extra"], undefined, "too many arguments");
  cli("--trigger bogus", [...RUN, "--trigger", "bogus"], undefined, "--trigger");
  cli("--session without a value", ["run", "-p", "hello", "--data-dir", "data", "--session"], undefined, "--session");
  cli("--model without a value", [...RUN, "--model"], undefined, "--model");
  cli("-p without a value", ["run", "--session", "s1", "--data-dir", "data", "-p"], undefined, "--prompt");
  cli("--config without a value", [...RUN, "--config"], undefined, "--config");
  cli("--session ''", ["run", "-p", "hello", "--data-dir", "data", "--session", ""], undefined, "--session");
  cli(
    "--session with a control character",
    ["run", "-p", "hello", "--data-dir", "data", "--session", "s\u00071"],
    undefined,
    "--session",
  );
  cli(
    "--session of 201 characters",
    ["run", "-p", "hello", "--data-dir", "data", "--session", "s".repeat(201)],
    undefined,
    "--session",
  );
  cli("--job-id ''", [...RUN, "--job-id", ""], undefined, "--job-id");
  cli("--config missing file", [...RUN, "--config", "nope.json"], "nope.json");
  cli("--config a directory", [...RUN, "--config", "data"], "data");
  cli("--config a binary file", [...RUN, "--config", "blob.json"], "blob.json", undefined, {
    "blob.json": "\u0000\u0001\u0002",
  });
  cli("--model nope:x", [...RUN, "--model", "nope:x"], undefined, "nope");
  cli("--model ''", [...RUN, "--model", ""], undefined, "--model");
  cli("--model scripted:missing.json", [...RUN, "--model", "scripted:missing.json"], "missing.json");
  cli("--model scripted:<a directory>", [...RUN, "--model", "scripted:data"], "data");
  cli("--settings bad inline JSON", [...RUN, "--settings", '{"hooks": {'], "--settings");
  cli("--settings inline unknown event", [...RUN, "--settings", '{"hooks":{"Nope":[]}}'], "--settings", "hooks.Nope");
  cli("--settings inline wrong type", [...RUN, "--settings", '{"hooks":[]}'], "--settings", "hooks");
  cli("--settings missing file", [...RUN, "--settings", "missing-settings.json"], "missing-settings.json");
  cli("--settings file with bad JSON", [...RUN, "--settings", "s.json"], "s.json", undefined, {
    "s.json": "{ 'hooks': }",
  });
  cli("--settings file with a bad matcher", [...RUN, "--settings", "s.json"], "s.json", "hooks.PreToolUse[0].matcher", {
    "s.json": pretty({ hooks: { PreToolUse: [{ matcher: "(", hooks: [{ type: "command", command: "true" }] }] } }),
  });
  cli("empty prompt", ["run", "-p", "   ", "--session", "s1", "--data-dir", "data"], undefined, "prompt");
  cli("no model anywhere", [...RUN], undefined, "model", {
    "gatehouse.json": pretty({ ...BASE_CONFIG, model: undefined }),
  });
  return cases;
}

/** The corpus in three parts of about 100 cases, by family: one test file each at CI size. */
export const R4_PARTS: readonly (readonly string[])[] = [
  ["config: wrong type", "config: unknown key", "config: out of range"],
  ["config: bad enum or name", "hooks: bad matcher or event", "settings: wrong type", "scripted model file"],
  ["JSON syntax and bytes", "oversized", "plugin modules", "CLI flags"],
];

// ---------------------------------------------------------------- running

/** The built CLI when it is newer than every source file (CI builds first), else the sources through tsx. */
export function cliCommand(): string[] {
  const built = join(ROOT, "dist/cli/main.js");
  if (existsSync(built)) {
    const builtAt = statSync(built).mtimeMs;
    const newest = Math.max(
      ...readdirSync(join(ROOT, "src"), { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile() && e.name.endsWith(".ts"))
        .map((e) => statSync(join(e.parentPath, e.name)).mtimeMs),
    );
    if (builtAt >= newest) return [built];
  }
  return ["--import", TSX, join(ROOT, "src/cli/main.ts")];
}

interface Spawned {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function runCli(cli: readonly string[], args: readonly string[], cwd: string): Promise<Spawned> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...cli, ...args], {
      cwd,
      // The generated project is the harness's own: trusted, so its plugins and rules are read
      // (an untrusted one would skip them, and their bad input with them; docs/trust.md).
      env: { PATH: process.env.PATH ?? "", HOME: join(cwd, "home"), NO_COLOR: "1", GATEHOUSE_TRUST_WORKSPACE: "1" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end("");
  });
}

function writeFiles(dir: string, files: Readonly<Record<string, string | Buffer | null>>): void {
  for (const [name, content] of Object.entries(files)) {
    const file = join(dir, name);
    if (content === null) {
      rmSync(file, { force: true });
      continue;
    }
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, content);
  }
}

/** Every row of every table of the SQLite store, and every other file of the data folder. */
export function storeFingerprint(dataDir: string): string {
  const hash = createHash("sha256");
  const db = new Database(join(dataDir, "gatehouse.db"), { readonly: true, fileMustExist: true });
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as {
      name: string;
    }[];
    for (const { name } of tables) {
      const rows = (db.prepare(`SELECT * FROM "${name}"`).all() as unknown[]).map((r) => JSON.stringify(r)).sort();
      hash.update(`${name}\n${rows.join("\n")}\n`);
    }
  } finally {
    db.close();
  }
  for (const e of readdirSync(dataDir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile() || /gatehouse\.db(-wal|-shm|-journal)?$/.test(e.name)) continue;
    const file = join(e.parentPath, e.name);
    hash.update(`${file.slice(dataDir.length)}\n`).update(readFileSync(file));
  }
  return hash.digest("hex");
}

const STACK = /^\s+at .+/m;

export interface R4Options {
  readonly seed?: number;
  readonly concurrency?: number;
  /** Only the cases this accepts. */
  readonly filter?: (c: R4Case) => boolean;
  readonly onCase?: (r: R4Result) => void;
}

/** A project with the base files and one stored session, s1, made by a valid run. */
async function seedProject(cli: readonly string[]): Promise<{ dir: string; fingerprint: string }> {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-r4-seed-"));
  writeFiles(dir, baseFiles());
  mkdirSync(join(dir, "home"));
  const r = await runCli(cli, ["run", "-p", "seed", "--session", "s1", "--data-dir", "data"], dir);
  if (r.code !== 0) throw new Error(`R4: the seed run failed (exit ${r.code}): ${r.stderr}`);
  if (r.stdout !== "hi seed\n") throw new Error(`R4: the seed run replied ${JSON.stringify(r.stdout)}`);
  return { dir, fingerprint: storeFingerprint(join(dir, "data")) };
}

async function runCase(
  c: R4Case,
  cli: readonly string[],
  seed: { dir: string; fingerprint: string },
): Promise<R4Result> {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-r4-"));
  const started = Date.now();
  try {
    cpSync(seed.dir, dir, { recursive: true });
    if (c.files) writeFiles(dir, c.files);
    const r = await runCli(cli, c.args ?? RUN, dir);
    const problems: string[] = [];
    if (r.code !== 2) problems.push(`exit ${r.code}, expected 2`);
    if (r.stderr.trim() === "") problems.push("stderr is empty");
    if (STACK.test(r.stderr)) problems.push("stderr holds a stack trace");
    if (c.file && !r.stderr.includes(c.file)) problems.push(`stderr does not name the file ${c.file}`);
    if (c.field && !r.stderr.includes(c.field)) problems.push(`stderr does not name the field ${c.field}`);
    if (r.stdout !== "") problems.push(`stdout is not empty: ${r.stdout.slice(0, 200)}`);
    const after = existsSync(join(dir, "data", "gatehouse.db")) ? storeFingerprint(join(dir, "data")) : "gone";
    if (after !== seed.fingerprint) problems.push("the stored session changed");
    return { case: c, ok: problems.length === 0, problems, code: r.code, stderr: r.stderr, ms: Date.now() - started };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function runR4(options: R4Options = {}): Promise<R4Figures> {
  const started = Date.now();
  const cli = cliCommand();
  const corpus = r4Corpus(options.seed).filter(options.filter ?? (() => true));
  const seed = await seedProject(cli);
  const results: R4Result[] = [];
  try {
    // The valid base project runs: every case's failure comes from its mutation.
    const control = mkdtempSync(join(tmpdir(), "gatehouse-r4-control-"));
    try {
      cpSync(seed.dir, control, { recursive: true });
      writeFiles(control, baseFiles({ mcp: true }));
      const r = await runCli(cli, RUN, control);
      if (r.code !== 0 || r.stdout !== "hi hello\n")
        throw new Error(`R4: the base project does not run (exit ${r.code}): ${r.stderr}`);
    } finally {
      rmSync(control, { recursive: true, force: true });
    }
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < corpus.length; i = next++) {
        const c = corpus[i] as R4Case;
        const r = await runCase(c, cli, seed);
        results[i] = r;
        options.onCase?.(r);
      }
    };
    await Promise.all(Array.from({ length: options.concurrency ?? 4 }, worker));
  } finally {
    rmSync(seed.dir, { recursive: true, force: true });
  }
  const byFamily: Record<string, number> = {};
  for (const c of corpus) byFamily[c.family] = (byFamily[c.family] ?? 0) + 1;
  const failed = results.filter((r) => !r.ok && !r.case.todo);
  return {
    cases: results.length,
    passed: results.filter((r) => r.ok).length,
    todo: results.filter((r) => !r.ok && r.case.todo).length,
    failed,
    results,
    byFamily,
    ms: Date.now() - started,
  };
}
