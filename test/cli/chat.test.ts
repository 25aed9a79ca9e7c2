import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { describe, test } from "node:test";
import { stripVTControlCharacters } from "node:util";
import { createGatehouse, type Gatehouse, type RunStream } from "../../src/assembly/gatehouse.js";
import { approverSlot, type ChatSessionOptions, type ChatSummary, chatSession } from "../../src/cli/chat.js";
import { createScriptedModel, type ScriptInput } from "../../src/models/index.js";
import { definePlugin, type PluginDefinition } from "../../src/plugins/index.js";
import { RunEventChannel } from "../../src/runtime/events.js";
import type { Approver, RunInput, RunResult } from "../../src/runtime/types.js";
import { openSqliteStore } from "../../src/store/index.js";
import { echoTool } from "../runtime/helpers.js";
import { gatehouse, tempProjects } from "./helpers.js";
import { gatehouseOnTerminal, hasColor } from "./project-helpers.js";

const SECRET = "INTERNAL-REASON-7f3a: user matched rule 12";
const NOTICE = "This request is not allowed here.";
const FILE_SECRET = "TOPSECRET-c0ffee";

/** Blocks prompts that mention "leak"; lets the others through. */
const BLOCKER = `export default { id: "blocker", setup(api) {
  api.on("before_agent_run", (e) => e.prompt.includes("leak")
    ? { outcome: "block", reason: ${JSON.stringify(SECRET)}, message: ${JSON.stringify(NOTICE)} } : undefined);
} };
`;

/** Withholds every Read output. */
const WITHHOLDER = `export default { id: "withholder", setup(api) {
  api.on("after_tool_call", () => ({ block: true }), { matcher: "Read" });
} };
`;

const ESC = "\u001b";

function sessionFromStderr(stderr: string): string {
  const id = /chat session (\S+) \((?:new|resumed[^)]*)\)/.exec(stderr)?.[1];
  assert.ok(id, `stderr names the session: ${stderr}`);
  return id;
}

async function userTexts(cwd: string, sessionId: string): Promise<string[]> {
  const store = openSqliteStore({ path: join(cwd, ".gatehouse", "gatehouse.db") });
  try {
    const messages = await store.history(sessionId);
    return messages
      .filter((m) => m.role === "user")
      .flatMap((m) => m.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])));
  } finally {
    await store.close();
  }
}

describe("gatehouse chat (stdin piped: plain output)", { concurrency: 4 }, () => {
  const fresh = tempProjects();

  test("several turns in one session, one reply per line; /exit ends the chat", async () => {
    const cwd = await fresh();
    const r = await gatehouse(["chat", "--model", "scripted:echo"], {
      cwd,
      input: "hello\n\nsecond turn\n/exit\nnever sent\n",
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "hello\nsecond turn\n");
    assert.ok(!(r.stdout + r.stderr).includes(ESC), "no terminal: no colors, no progress line");
    const id = sessionFromStderr(r.stderr);
    assert.deepEqual(await userTexts(cwd, id), ["hello", "second turn"]);
  });

  test("a scripted file with a tool call: a ✓ line for the tool, then the reply; end of input ends the chat", async () => {
    const cwd = await fresh({
      "notes.txt": "alpha\n",
      "s.json": {
        runs: [
          {
            match: "^notes",
            turns: [{ toolCalls: [{ name: "Read", input: { file_path: "notes.txt" } }] }, { text: "read the notes" }],
          },
          { turns: [{ text: "you said {{prompt}}", chunks: 3 }] },
        ],
      },
    });
    const r = await gatehouse(["chat", "--model", "scripted:s.json"], { cwd, input: "hi\nnotes please" });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `you said hi\n✓ Read(${join(cwd, "notes.txt")})\nread the notes\n`);
  });

  test("/reset moves the chat to a new session: later turns go there", async () => {
    const cwd = await fresh();
    const r = await gatehouse(["chat", "--model", "scripted:echo"], { cwd, input: "first\n/reset\nsecond\n" });
    assert.equal(r.code, 0, r.stderr);
    const started = sessionFromStderr(r.stderr);
    const reset = /^Started a new session \((\S+)\)\.$/m.exec(r.stdout)?.[1];
    assert.ok(reset && reset !== started, r.stdout);
    assert.match(r.stdout, /second\n$/);
    assert.deepEqual(await userTexts(cwd, started), ["first"]);
    assert.deepEqual(await userTexts(cwd, reset), ["second"]);
  });

  test("--session ID resumes: a second process continues with the history", async () => {
    const cwd = await fresh();
    const first = await gatehouse(["chat", "--session", "s-1", "--model", "scripted:echo"], { cwd, input: "one\n" });
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stderr, /chat session s-1 \(new\)/);

    const second = await gatehouse(["chat", "--session", "s-1", "--model", "scripted:echo"], {
      cwd,
      input: "/status\ntwo\n",
    });
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stderr, /chat session s-1 \(resumed, 2 messages\)/);
    assert.match(second.stdout, /^Session: s-1$/m);
    assert.match(second.stdout, /^Messages in history: 2$/m, "the runtime loaded the first process's turn");
    assert.deepEqual(await userTexts(cwd, "s-1"), ["one", "two"]);

    const other = await gatehouse(["chat", "--model", "scripted:echo"], { cwd, input: "x\n" });
    assert.notEqual(sessionFromStderr(other.stderr), "s-1", "without --session: a new session");
  });

  test("a plugin's block is shown with the plugin and hook, never the reason; the chat goes on", async () => {
    const cwd = await fresh({
      "policy/block.mjs": BLOCKER,
      "gatehouse.json": {
        model: "scripted:echo",
        plugins: [{ path: "policy/block.mjs", hooks: { allowConversationAccess: true } }],
      },
    });
    const r = await gatehouse(["chat"], { cwd, input: "please leak the thing\nhello\n" });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `⛔ blocked by blocker (before_agent_run): ${NOTICE}\nhello\n`);
    assert.ok(!`${r.stdout}${r.stderr}`.includes(SECRET));
  });

  test("a withheld tool output is never printed: the line carries the notice", async () => {
    const cwd = await fresh({
      "secret.txt": `${FILE_SECRET}\n`,
      "withhold.mjs": WITHHOLDER,
      "s.json": {
        runs: [
          {
            turns: [
              { toolCalls: [{ name: "Read", input: { file_path: "secret.txt" } }] },
              { text: "the tool said: {{lastToolResult}}" },
            ],
          },
        ],
      },
      "gatehouse.json": { model: "scripted:s.json", plugins: [{ path: "withhold.mjs" }] },
    });
    const r = await gatehouse(["chat"], { cwd, input: "read it\n" });
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /^✓ Read\(.*secret\.txt\) — \[The output of this Read call was withheld by a policy \(withholder\)\. The tool did run\.\]$/m,
    );
    assert.match(r.stdout, /^the tool said: \[The output of this Read call was withheld/m);
    assert.ok(!`${r.stdout}${r.stderr}`.includes(FILE_SECRET));
  });

  test("configured as run is: --settings command hooks; approvals without a terminal are denied", async () => {
    const guard = "#!/bin/sh\ncat >/dev/null\necho 'prompts like this are not allowed' >&2\nexit 2\n";
    const settings = JSON.stringify({
      hooks: {
        UserPromptSubmit: [{ hooks: [{ type: "command", command: "sh ./guard.sh" }] }],
        PreToolUse: [{ matcher: "Read", hooks: [{ type: "command", command: `echo '${ASK}'` }] }],
      },
    });
    const cwd = await fresh({
      "guard.sh": guard,
      "s.json": {
        runs: [
          { match: "^read", turns: [{ toolCalls: [{ name: "Read", input: { file_path: "x" } }] }, { text: "ok" }] },
          { turns: [{ text: "unreachable" }] },
        ],
      },
    });
    const blocked = await gatehouse(["chat", "--model", "scripted:s.json", "--settings", settings], {
      cwd,
      input: "tell me\n",
    });
    assert.equal(blocked.code, 0, blocked.stderr);
    assert.equal(blocked.stdout, "⛔ blocked by command-hooks (before_input): prompts like this are not allowed\n");

    const onlyAsk = JSON.stringify({
      hooks: { PreToolUse: [{ matcher: "Read", hooks: [{ type: "command", command: `echo '${ASK}'` }] }] },
    });
    const denied = await gatehouse(["chat", "--model", "scripted:s.json", "--settings", onlyAsk], {
      cwd,
      input: "read x\ny\n",
    });
    assert.equal(denied.code, 0, denied.stderr);
    assert.match(
      denied.stdout,
      /^✗ Read — Permission to use Read was denied \(it needs approval in default mode, and no one can be asked here\)\.$/m,
    );
    assert.doesNotMatch(denied.stdout, /Allow Read\?/);
  });

  test("bad configuration exits 2 before the chat starts", async () => {
    const cwd = await fresh();
    const noModel = await gatehouse(["chat"], { cwd, input: "hi\n" });
    assert.equal(noModel.code, 2);
    assert.match(noModel.stderr, /no model configured/);
    const badId = await gatehouse(["chat", "--model", "scripted:echo", "--session", "a\tb"], { cwd });
    assert.equal(badId.code, 2);
    assert.match(badId.stderr, /--session: expected 1 to 200 characters/);
    assert.equal(`${noModel.stdout}${badId.stdout}`, "");
  });

  test("chat --help lists its flags and the keys of the chat", async () => {
    const cwd = await fresh();
    const r = await gatehouse(["chat", "--help"], { cwd });
    assert.equal(r.code, 0);
    for (const flag of [
      "--session",
      "--continue",
      "--resume",
      "--model",
      "--config",
      "--data-dir",
      "--settings",
      "Ctrl-C",
      "/exit",
      "\\ then Enter",
      "Up / Down",
    ])
      assert.ok(r.stdout.includes(flag), `${flag} in ${r.stdout}`);
  });
});

/** Holds every turn at its prompt gate (the run's cancellation still ends it): a turn under way. */
const HOLDER = `export default { id: "holder", setup(api) {
  api.on("before_agent_run", () => { api.logger.warn("turn under way"); return new Promise(() => {}); }, { timeoutMs: 60000 });
} };
`;

describe("gatehouse chat on a terminal", { concurrency: 2 }, () => {
  const fresh = tempProjects();

  test("colored on a terminal, never with NO_COLOR; the prompt and the reply either way", async () => {
    const cwd = await fresh();
    // Typed: a line, then Ctrl-D at the empty prompt.
    const keys = { input: "hello there\r\x04" };
    const colored = await gatehouseOnTerminal(["chat", "--model", "scripted:echo"], { cwd, ...keys });
    assert.equal(colored.code, 0, colored.stderr);
    assert.ok(hasColor(colored.stdout), "colors on a terminal");
    const plain = await gatehouseOnTerminal(["chat", "--model", "scripted:echo"], {
      cwd,
      ...keys,
      env: { NO_COLOR: "1" },
    });
    assert.equal(plain.code, 0, plain.stderr);
    assert.ok(!hasColor(plain.stdout + plain.stderr), "no color codes with NO_COLOR");
    for (const r of [colored, plain]) {
      const shown = stripVTControlCharacters(r.stdout);
      assert.match(shown, /gatehouse chat · session \S+ \(new\)/);
      assert.match(shown, /^> /m, "the prompt");
      assert.match(shown, /^hello there$/m, "the reply on its own line");
      assert.match(shown, /resume with: gatehouse chat --session \S+/);
    }
  });

  /** A project whose turns wait in a plugin until cancelled (HOLDER), so Ctrl-C lands mid-turn. */
  const holderProject = () =>
    fresh({
      "holder.mjs": HOLDER,
      "gatehouse.json": {
        model: "scripted:echo",
        plugins: [{ path: "holder.mjs", hooks: { allowConversationAccess: true } }],
      },
    });

  test("Ctrl-C twice while a turn is being cancelled leaves the chat at once: exit 130", async () => {
    const cwd = await holderProject();
    let typed = false;
    const r = await gatehouseOnTerminal(["chat"], {
      cwd,
      input: "hi\r",
      keepStdinOpen: true,
      // Both keys in one read: the second comes before the cancelled turn could wind down.
      onStderr: (soFar, child) => {
        if (!typed && soFar.includes("turn under way")) typed = child.stdin?.write("\x03\x03") ?? false;
      },
    });
    assert.ok(typed);
    assert.equal(r.code, 130, r.stderr);
    assert.match(stripVTControlCharacters(r.stdout), /\^C cancelling the turn \(Ctrl-C again to quit\)/);
  });

  test("one Ctrl-C cancels the turn and the chat goes on; it then ends with exit 0", async () => {
    const cwd = await holderProject();
    let typed = false;
    let left = false;
    const r = await gatehouseOnTerminal(["chat"], {
      cwd,
      input: "hi\r",
      keepStdinOpen: true,
      onStderr: (soFar, child) => {
        if (!typed && soFar.includes("turn under way")) typed = child.stdin?.write("\x03") ?? false;
      },
      // The chat says on stdout that the turn was cancelled; then leave with /exit.
      onStdout: (soFar, child) => {
        if (left || !stripVTControlCharacters(soFar).includes("turn cancelled")) return;
        left = true;
        child.stdin?.end("/exit\r");
      },
    });
    assert.ok(typed && left);
    assert.equal(r.code, 0, r.stderr);
  });
});

/** Claude Code's PreToolUse "ask": the runtime raises an approval request. */
const ASK = JSON.stringify({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "ask" } });

/** A terminal made of two pipes: type into it, wait for what it shows. */
function terminal() {
  const input = new PassThrough();
  const output = new PassThrough();
  let shown = "";
  const waiting: { test: (text: string) => boolean; resolve: () => void }[] = [];
  output.setEncoding("utf8").on("data", (chunk: string) => {
    shown += chunk;
    for (const w of [...waiting]) {
      if (w.test(shown)) {
        waiting.splice(waiting.indexOf(w), 1);
        w.resolve();
      }
    }
  });
  return {
    input,
    output,
    get shown() {
      return shown;
    },
    /** Resolves once the output (from `from` on) contains `text`. */
    until(text: string | RegExp, from = 0): Promise<void> {
      const test = (all: string) => {
        const part = all.slice(from);
        return typeof text === "string" ? part.includes(text) : text.test(part);
      };
      if (test(shown)) return Promise.resolve();
      return new Promise((resolve) => waiting.push({ test, resolve }));
    },
    type(keys: string) {
      input.write(keys);
    },
  };
}

/** What is left once escape sequences are removed. */
function plain(text: string): string {
  return stripVTControlCharacters(text);
}

function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** A Gatehouse whose runs the test drives event by event. */
function scriptedRuns() {
  const started: { input: RunInput; channel: RunEventChannel; finish(result?: Partial<RunResult>): void }[] = [];
  const waiters: ((n: number) => void)[] = [];
  const gh = {
    stream(input: RunInput): RunStream {
      const channel = new RunEventChannel();
      const done = deferred<RunResult>();
      started.push({
        input,
        channel,
        finish(result = {}) {
          const full: RunResult = {
            sessionId: input.sessionId ?? "s",
            runId: `r${started.length}`,
            outcome: "completed",
            reply: null,
            steps: 1,
            durationMs: 1,
            permissionDenials: [],
            ...result,
          };
          channel.push({ type: "run-end", result: full });
          channel.close();
          done.resolve(full);
        },
      });
      for (const w of waiters.splice(0)) w(started.length);
      return Object.assign(channel, { result: done.promise });
    },
  };
  return {
    gatehouse: gh,
    /** The n-th run (1-based), once it started. */
    async run(n: number) {
      while (started.length < n) await new Promise<number>((resolve) => waiters.push(resolve));
      return started[n - 1] as (typeof started)[number];
    },
  };
}

function session(
  term: ReturnType<typeof terminal>,
  options: Partial<ChatSessionOptions> & Pick<ChatSessionOptions, "gatehouse">,
): Promise<ChatSummary> {
  return chatSession({ input: term.input, output: term.output, isTTY: true, color: true, ...options });
}

/** A real Gatehouse on an in-memory store. */
function realGatehouse(options: {
  script: ScriptInput;
  plugins?: PluginDefinition[];
  approver?: Approver;
  tools?: boolean;
}): Gatehouse {
  return createGatehouse({
    model: createScriptedModel(options.script),
    store: { kind: "memory" },
    plugins: options.plugins ?? [],
    ...(options.tools ? { tools: [echoTool as never] } : {}),
    ...(options.approver ? { approver: options.approver } : {}),
  });
}

describe("chatSession on a terminal", () => {
  test("text deltas are printed as they arrive; the final text is not printed again", async () => {
    const term = terminal();
    const runs = scriptedRuns();
    const done = session(term, { gatehouse: runs.gatehouse, sessionId: "s-live" });
    await term.until("> ");
    term.type("hi\r");
    const run = await runs.run(1);
    assert.equal(run.input.prompt, "hi");
    assert.equal(run.input.sessionId, "s-live");
    run.channel.push({ type: "run-start", sessionId: "s-live", runId: "r1", outputHeld: false });
    await term.until("thinking…");
    const mark = term.shown.length;
    run.channel.push({ type: "text-delta", delta: "Hel" });
    await term.until("Hel", mark);
    assert.ok(term.shown.slice(mark).startsWith("\r\x1b[2K"), "the progress line is erased before the text");
    run.channel.push({ type: "text-delta", delta: "lo, world" });
    await term.until("lo, world", mark);
    run.channel.push({ type: "final", text: "Hello, world" });
    run.finish({ reply: "Hello, world" });
    const after = term.shown.length;
    await term.until("> ", after);
    assert.equal(plain(term.shown.slice(mark)).split("Hello, world").length, 2, "the reply shows once");
    term.input.end();
    assert.deepEqual(await done, { sessionId: "s-live", turns: 1, reason: "eof" });
  });

  test("the progress line animates with the elapsed time and tokens, and says when an output gate holds the reply", async () => {
    const term = terminal();
    const runs = scriptedRuns();
    const done = session(term, { gatehouse: runs.gatehouse, color: false });
    term.type("go\r");
    const run = await runs.run(1);
    run.channel.push({ type: "run-start", sessionId: "s1", runId: "r1", outputHeld: true });
    await term.until("thinking… (the reply is held until the output policy passes) · 0.");
    run.channel.push({ type: "step", step: 2, tokens: 42 });
    const mark = term.shown.length;
    await term.until("thinking… · 42 tokens (the reply is held until the output policy passes) · ", mark);
    // Redrawn on its own while nothing happens: a new spinner frame. (Its timer is unref'd, as the
    // chat's stdin keeps a real process alive; this handle stands in for it.)
    const alive = setInterval(() => {}, 60_000);
    const frames = new Set<string>();
    for (let seen = term.shown.length; frames.size < 2; seen = term.shown.length) {
      await term.until("42 tokens", seen);
      for (const m of term.shown.slice(mark).matchAll(/([⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]) thinking/g)) frames.add(m[1] ?? "");
    }
    clearInterval(alive);
    run.channel.push({ type: "final", text: "ok" });
    run.finish({ reply: "ok" });
    await term.until("> ", term.shown.length);
    term.input.end();
    await done;
  });

  test("held-back text (output gates) is printed when the final event comes; blocks and tools get their lines", async () => {
    const term = terminal();
    const runs = scriptedRuns();
    const done = session(term, { gatehouse: runs.gatehouse, color: false });
    term.type("go\r");
    const run = await runs.run(1);
    run.channel.push({ type: "tool-call", toolCallId: "t1", toolName: "Bash", input: { command: "ls -la" } });
    await term.until("Bash(ls -la) …");
    run.channel.push({
      type: "tool-result",
      toolCallId: "t1",
      toolName: "Bash",
      output: "[withheld notice]",
      isError: false,
      withheld: true,
    });
    run.channel.push({
      type: "tool-blocked",
      toolCallId: "t2",
      toolName: "Write",
      message: "The Write call was not approved.",
    });
    run.channel.push({ type: "final", text: "Gated answer" });
    run.finish({ reply: "Gated answer" });
    await term.until("Gated answer\n");
    const lines = plain(term.shown).split(/\r?\n/);
    assert.ok(
      lines.some((l) => l.endsWith("✓ Bash(ls -la) — [withheld notice]")),
      term.shown,
    );
    assert.ok(lines.includes("✗ Write — The Write call was not approved."), term.shown);

    term.type("again\r");
    const second = await runs.run(2);
    second.channel.push({ type: "blocked", hook: "before_agent_run", pluginId: "p1", message: "No." });
    second.finish({ outcome: "blocked", reply: "No." });
    await term.until("⛔ blocked by p1 (before_agent_run): No.\n");
    term.input.end();
    await done;
    assert.doesNotMatch(term.shown, new RegExp(`${ESC}\\[\\d+m`), "color: false writes no colors");
  });

  test("Ctrl-C cancels the running turn (not the session); the next prompt gets a new turn", async () => {
    const term = terminal();
    const running = deferred();
    const waiter = definePlugin({
      id: "waiter",
      setup(api) {
        api.on(
          "before_agent_run",
          (e, ctx) => {
            if (!e.prompt.includes("wait")) return undefined;
            running.resolve();
            return new Promise((resolve) => ctx.signal.addEventListener("abort", () => resolve(undefined)));
          },
          {},
        );
      },
    });
    const gh = realGatehouse({ script: { runs: [{ turns: [{ text: "reply: {{prompt}}" }] }] }, plugins: [waiter] });
    const done = session(term, { gatehouse: gh, sessionId: "s-cancel" });
    term.type("please wait\r");
    await running.promise;
    const mark = term.shown.length;
    term.type("\x03");
    await term.until(/turn cancelled[\s\S]*> /, mark);
    term.type("again\r");
    await term.until("reply: again");
    term.type("\x04");
    assert.deepEqual(await done, { sessionId: "s-cancel", turns: 2, reason: "eof" });
    const runs = await gh.store.listRuns("s-cancel");
    assert.deepEqual(
      runs.map((r) => r.status),
      ["cancelled", "completed"],
    );
    assert.match(plain(term.shown), /resume with: gatehouse chat --session s-cancel/);
    await gh.close();
  });

  test("Ctrl-C at the prompt: a typed line is dropped; on an empty line it asks, and a second one leaves", async () => {
    const term = terminal();
    const runs = scriptedRuns();
    const done = session(term, { gatehouse: runs.gatehouse });
    await term.until("> ");
    term.type("half a thought\x03");
    term.type("\x03");
    await term.until("press Ctrl-C again or type /exit to leave");
    term.type("\x03");
    const summary = await done;
    assert.equal(summary.reason, "interrupt");
    assert.equal(summary.turns, 0, "the dropped line never became a turn");
  });

  test("approvals are asked inline: y runs the tool, n denies it (and the denial is shown once)", async () => {
    const term = terminal();
    const approvals = approverSlot();
    const ask = definePlugin({
      id: "ask",
      setup(api) {
        api.on("before_tool_call", () => ({ requireApproval: { title: "Echo something?" } }));
      },
    });
    const gh = realGatehouse({
      script: {
        runs: [
          {
            turns: [
              { toolCalls: [{ name: "Echo", input: { text: "ping" } }] },
              { text: "tool said {{lastToolResult}}" },
            ],
          },
        ],
      },
      plugins: [ask],
      approver: approvals.approver,
      tools: true,
    });
    const done = session(term, { gatehouse: gh, approvals, color: false });
    term.type("go\r");
    // A hook's ask: no rule would stop it asking again, so "always" is not offered.
    await term.until("Allow Echo? Echo something? [y]es once / [n]o, then Enter: ");
    term.type("y\r");
    await term.until(/tool said \{"echoed":"ping"\}/);
    assert.match(plain(term.shown), /✓ Echo\(ping\)/);

    const mark = term.shown.length;
    term.type("go\r");
    await term.until("[y]es once / [n]o, then Enter: ", mark);
    term.type("n\r");
    await term.until("✗ Echo — The Echo call was not approved.", mark);
    await term.until(/tool said The Echo call was not approved\./, mark);
    // The denial is told once: the tool line carries it, no second notice repeats it.
    assert.equal(plain(term.shown.slice(mark)).split("not approved").length - 1, 2, term.shown.slice(mark));
    term.type("/exit\r");
    assert.equal((await done).reason, "exit");
    await gh.close();
  });
});

describe("chatSession without a terminal", () => {
  test("an interrupt (SIGINT) cancels the turn; a second one while it will not stop gives up on it", async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    const errors: string[] = [];
    let interrupt: () => void = () => {};
    const runs = scriptedRuns();
    const done = chatSession({
      gatehouse: runs.gatehouse,
      input,
      output,
      errorOutput: { write: (text: string) => errors.push(text) > 0 },
      isTTY: false,
      color: false,
      interrupts: (listener) => {
        interrupt = listener;
        return () => {};
      },
    });
    input.write("first\nsecond\n");
    const first = await runs.run(1);
    interrupt();
    assert.ok(first.input.signal?.aborted, "the turn's signal is aborted");
    first.finish({ outcome: "cancelled" });
    const second = await runs.run(2);
    assert.equal(second.input.prompt, "second");
    interrupt();
    interrupt();
    const summary = await done;
    assert.equal(summary.reason, "forced");
    assert.equal(summary.turns, 2);
    assert.ok(errors.includes("gatehouse: turn cancelled\n"), errors.join(""));
  });
});

test("chat.ts loads nothing heavy when main.ts registers it at start-up", async () => {
  const source = await readFile(new URL("../../src/cli/chat.ts", import.meta.url), "utf8");
  const eager = [...source.matchAll(/^import\s+(?!type\s)[^;]*?from\s+"([^"]+)"/gm)].map((m) => m[1] ?? "");
  const light = new Set([
    "picocolors",
    "./exit.js",
    "./output.js",
    // Commander's options and the list of permission modes: main.ts loads it at start-up anyway.
    "./permission-flags.js",
    "./signals.js",
    "./terminal.js",
    "./run-end.js",
    "./status-line.js",
    "../core/secrets.js",
    "./chat-input.js",
    // run's and chat's shared commander options (commander and the exit codes): main.ts loads it at start-up anyway.
    "./run-command.js",
  ]);
  for (const specifier of eager) assert.ok(specifier.startsWith("node:") || light.has(specifier), specifier);
  // The multi-line composer and history file: node built-ins only.
  const input = await readFile(new URL("../../src/cli/chat-input.ts", import.meta.url), "utf8");
  for (const m of input.matchAll(/^import\s+(?!type\s)[^;]*?from\s+"([^"]+)"/gm))
    assert.ok(m[1]?.startsWith("node:"), `chat-input.ts imports ${m[1]}`);
});
