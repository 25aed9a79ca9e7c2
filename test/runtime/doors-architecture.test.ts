import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";

/**
 * The doors by construction (issue 11, issue 30). The first line is the type system: outside
 * src/runtime/doors/, the store is a `StoreView` and a run a `RunState`, neither of which can
 * store or show text (test/runtime/doors-types.test.ts compiles such a bypass and expects the
 * error). This test is the second line: it reads the sources and fails when a file elsewhere
 * gets hold of a way to write such text:
 * - imports the message writer (doors/persist.ts) or opens the doors' capabilities
 *   (doors/outbox.ts, whose `Doors` alone — the sealed writer the assembly makes — may be named
 *   elsewhere; `doorChannel`, a run's text channel);
 * - calls a store method that writes or rewrites messages;
 * - emits a run event that carries text, or sets the run's reply;
 * and when the store or the run events grow a method or an event nobody classified here.
 */

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SRC = join(ROOT, "src");
const DOORS = "src/runtime/doors/";

/** Store methods that write, rewrite or remove messages: the doors' alone (and the store's own code). */
const MESSAGE_WRITERS = ["appendMessage", "rewriteRun", "blockRun", "blockPrompt", "recordCompaction"];
/**
 * Every other method of SessionStore (the `StoreView`), each of which writes no message text a
 * user is shown: `queueInjection` holds model-only context;
 * `setSessionTitle` stores a title a person or API client gave the session (the CLI's default
 * title, the first prompt, is read from the stored messages and never written here); `service`
 * is the server's records (keys, owners, run steps, live runs, logins: identifiers and numbers),
 * with one exception: an approval ask keeps, while it waits, the input the approver is shown
 * (secrets masked) — asked from the tool door (doors/approvals.ts). `pluginState` is an OpenClaw
 * plugin's own `api.runtime.state` (src/plugins/openclaw/state.ts): what a plugin keeps there is
 * its data, as a file it writes would be, never a message the runtime stores for a user.
 */
const OTHER_STORE_METHODS = [
  "kind",
  "createSession",
  "getSession",
  "getSessionByKey",
  "listSessions",
  "showSession",
  "exportSession",
  "deleteSession",
  "setSessionTitle",
  "startRun",
  "finishRun",
  "getRun",
  "listRuns",
  "acquireRunLock",
  "abandonedRunLocks",
  "runMessages",
  "sessionMessages",
  "history",
  "listCompactions",
  "dropSummariesCovering",
  "queueInjection",
  "peekInjections",
  "commitInjections",
  "expireInjections",
  "writeAudit",
  "listAudit",
  "materializeTranscript",
  "service",
  "pluginState",
  "close",
];
/** Run events that carry text a user sees, and those that do not (src/runtime/types.ts). */
const TEXT_EVENTS = ["text-delta", "final", "blocked", "tool-call", "tool-blocked", "tool-result"];
const PROGRESS_EVENTS = ["run-start", "step", "retry", "lock-wait", "approval-requested", "compacted", "run-end"];
/** Methods that emit text or set what was delivered (an outbox's, a run's text channel's) or end a run blocked. */
const DELIVERY_METHODS = ["emitText", "deliver", "setBlocked"];
/** What outside the doors may import from doors/outbox.ts: the sealed writer the assembly makes. */
const OUTBOX_PUBLIC = ["Doors"];

interface Source {
  /** Relative to the repository, with forward slashes. */
  readonly path: string;
  /** The text without comments (a comment may name a method without calling it). */
  readonly code: string;
}

function sources(dir: string): Source[] {
  const out: Source[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sources(full));
    else if (entry.name.endsWith(".ts"))
      out.push({ path: relative(ROOT, full).split("\\").join("/"), code: withoutComments(readFileSync(full, "utf8")) });
  }
  return out;
}

function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`])\/\/.*$/gm, "$1");
}

/** The repository-relative files a source imports (static and dynamic imports, re-exports). */
function importsOf(source: Source): string[] {
  const specifiers = [
    ...source.code.matchAll(/\bfrom\s+"([^"]+)"/g),
    ...source.code.matchAll(/\bimport\s*\(\s*"([^"]+)"\s*\)/g),
    ...source.code.matchAll(/^\s*import\s+"([^"]+)"/gm),
  ].map((m) => m[1] as string);
  return specifiers
    .filter((s) => s.startsWith("."))
    .map((s) =>
      relative(ROOT, resolve(ROOT, dirname(source.path), s.replace(/\.js$/, ".ts")))
        .split("\\")
        .join("/"),
    );
}

/** The names a source imports from `target` (a namespace import counts as `*`). */
function namesImportedFrom(source: Source, target: string): string[] {
  const names: string[] = [];
  for (const m of source.code.matchAll(/\bimport\s+(type\s+)?([^"]*?)\s+from\s+"([^"]+)"/g)) {
    const [, typeOnly, clause = "", specifier = ""] = m;
    if (!specifier.startsWith(".")) continue;
    const file = relative(ROOT, resolve(ROOT, dirname(source.path), specifier.replace(/\.js$/, ".ts")))
      .split("\\")
      .join("/");
    if (file !== target || typeOnly) continue;
    if (clause.includes("*")) names.push("*");
    for (const n of clause.replace(/^[^{]*\{|\}[^}]*$/g, "").split(","))
      if (n.trim() && !n.trim().startsWith("type ")) names.push(n.trim().split(/\s+as\s+/)[0] as string);
  }
  for (const m of source.code.matchAll(/\bimport\s*\(\s*"([^"]+)"\s*\)/g))
    if (
      relative(ROOT, resolve(ROOT, dirname(source.path), (m[1] as string).replace(/\.js$/, ".ts")))
        .split("\\")
        .join("/") === target
    )
      names.push("*");
  return names;
}

/** What a source may not do outside the doors, as one line per finding. */
export function violations(all: readonly Source[]): string[] {
  const found: string[] = [];
  for (const source of all) {
    const inDoors = source.path.startsWith(DOORS);
    const inStore = source.path.startsWith("src/store/");
    if (!inDoors && importsOf(source).includes(`${DOORS}persist.ts`))
      found.push(`${source.path} imports the message writer (${DOORS}persist.ts)`);
    if (!inDoors)
      for (const name of namesImportedFrom(source, `${DOORS}outbox.ts`))
        if (!OUTBOX_PUBLIC.includes(name)) found.push(`${source.path} imports ${name} from ${DOORS}outbox.ts`);
    if (!inDoors && source.path !== "src/runtime/state.ts" && /\bdoorChannel\b/.test(source.code))
      found.push(`${source.path} opens a run's text channel (doorChannel)`);
    if (!inDoors && !inStore)
      for (const m of source.code.matchAll(new RegExp(`\\.(${MESSAGE_WRITERS.join("|")})\\s*\\(`, "g")))
        found.push(`${source.path} calls the store's ${m[1]}`);
    if (!inDoors)
      for (const m of source.code.matchAll(new RegExp(`\\.(${DELIVERY_METHODS.join("|")})\\s*\\(`, "g")))
        found.push(`${source.path} calls ${m[1]}`);
    if (source.path.startsWith("src/runtime/") && !inDoors && source.path !== "src/runtime/types.ts")
      for (const m of source.code.matchAll(new RegExp(`\\btype:\\s*"(${TEXT_EVENTS.join("|")})"`, "g")))
        found.push(`${source.path} builds a "${m[1]}" run event`);
  }
  return found;
}

describe("text reaches users and the store only through the doors", () => {
  const all = sources(SRC);

  test("no file outside src/runtime/doors/ writes messages, emits text events or sets the reply", () => {
    assert.deepEqual(violations(all), []);
    assert.ok(
      all.some((s) => s.path === `${DOORS}output.ts`),
      "the output door is where this test looks",
    );
  });

  test("the check finds each kind of bypass (it can fail)", () => {
    const bypass: Source = {
      path: "src/runtime/shortcut.ts",
      code: [
        'import { writeMessage } from "./doors/persist.js";',
        'import { Doors, outbox, type Outbox } from "./doors/outbox.js";',
        "const channel = doorChannel(state);",
        "await deps.store.appendMessage({ role: 'assistant' });",
        "await deps.store.rewriteRun(runId, texts);",
        "state.emitText({ type: 'final', text });",
        "outbox(deps, state).deliver(text);",
        'sink({ type: "final", text });',
      ].join("\n"),
    };
    assert.deepEqual(violations([bypass]), [
      "src/runtime/shortcut.ts imports the message writer (src/runtime/doors/persist.ts)",
      "src/runtime/shortcut.ts imports outbox from src/runtime/doors/outbox.ts",
      "src/runtime/shortcut.ts opens a run's text channel (doorChannel)",
      "src/runtime/shortcut.ts calls the store's appendMessage",
      "src/runtime/shortcut.ts calls the store's rewriteRun",
      "src/runtime/shortcut.ts calls emitText",
      "src/runtime/shortcut.ts calls deliver",
      'src/runtime/shortcut.ts builds a "final" run event',
    ]);
    const commented: Source = { path: "src/cli/x.ts", code: withoutComments("// store.blockRun(id) is the doors'\n") };
    assert.deepEqual(violations([commented]), []);
  });

  test("every store method and every run event is classified (a new one must be, before it can bypass the doors)", () => {
    const store = readFileSync(join(SRC, "store/types.ts"), "utf8");
    const body = store.slice(store.indexOf("export interface SessionStore {"));
    const members = [...body.slice(0, body.indexOf("\n}")).matchAll(/^ {2}(?:readonly )?(\w+)[(:<]/gm)].map(
      (m) => m[1] as string,
    );
    assert.deepEqual([...members].sort(), [...MESSAGE_WRITERS, ...OTHER_STORE_METHODS].sort());
    // The writers this test knows are the ones the type system keeps from the `StoreView`.
    const writers = /export type MessageWriterMethod = ([^;]+);/.exec(store)?.[1] ?? "";
    assert.deepEqual([...writers.matchAll(/"(\w+)"/g)].map((m) => m[1]).sort(), [...MESSAGE_WRITERS].sort());
    const types = readFileSync(join(SRC, "runtime/types.ts"), "utf8");
    const union = types.slice(types.indexOf("export type RunEvent ="), types.indexOf("export type TextEvent"));
    const events = [...union.matchAll(/readonly type: "([a-z-]+)"/g)].map((m) => m[1] as string);
    assert.deepEqual([...events].sort(), [...TEXT_EVENTS, ...PROGRESS_EVENTS].sort());
    assert.match(types, new RegExp(`readonly type: ${TEXT_EVENTS.map((e) => `"${e}"`).join(" \\| ")}`));
  });
});
