import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { after, describe, test } from "node:test";
import { createTerminalApprover } from "../../src/cli/approver.js";
import type { ApprovalRequest } from "../../src/runtime/types.js";
import { gatehouse, project } from "./helpers.js";

const REQUEST: ApprovalRequest = {
  sessionId: "s1",
  runId: "r1",
  toolName: "Bash",
  toolCallId: "call_1",
  params: { command: "rm -rf build" },
  title: "Delete the build folder?",
  suggestions: ["Bash(rm:*)"],
};
const CHOICES =
  "[y]es once / [a]lways (this session) / [p]roject (save to .claude/settings.local.json) / [n]o, then Enter";
const QUESTION = `Allow Bash? Delete the build folder? ${CHOICES}: `;

/** A fake terminal: stdin and stderr as PassThrough streams that say they are TTYs. */
function terminal() {
  const input = Object.assign(new PassThrough(), { isTTY: true });
  const output = Object.assign(new PassThrough(), { isTTY: true });
  let written = "";
  const waiters: { text: string; count: number; resolve: () => void }[] = [];
  output.setEncoding("utf8").on("data", (chunk: string) => {
    written += chunk;
    for (const w of waiters.splice(0)) {
      if (occurrences(written, w.text) >= w.count) w.resolve();
      else waiters.push(w);
    }
  });
  return {
    input,
    output,
    written: () => written,
    /** Resolves once `text` has been written `count` times in all. */
    shown(text: string, count = 1): Promise<void> {
      if (occurrences(written, text) >= count) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ text, count, resolve }));
    },
  };
}

function occurrences(haystack: string, needle: string): number {
  return haystack.split(needle).length - 1;
}

describe("the terminal approver", () => {
  for (const [answer, decision] of [
    ["a", "allow-always"],
    ["y", "allow-once"],
    ["n", "deny"],
    ["  YES ", "allow-once"],
    ["always", "allow-always"],
    ["p", "allow-always-local"],
  ] as const) {
    test(`asks on stderr and reads "${answer.trim()}" from stdin: ${decision}`, async () => {
      const t = terminal();
      const approve = createTerminalApprover(t);
      const pending = approve(REQUEST, new AbortController().signal);
      await t.shown(QUESTION);
      t.input.write(`${answer}\n`);
      assert.equal(await pending, decision);
      assert.ok(t.written().endsWith(QUESTION), t.written());
      assert.match(t.written(), /^ {2}command: rm -rf build\n/, "the tool's input is shown above the question");
      assert.match(
        t.written(),
        /^ {2}"always" adds: Bash\(rm:\*\)\n/m,
        "the rule an always adds is shown before the choice",
      );
      assert.equal(t.input.listenerCount("data"), 0, "stops reading once answered");
    });
  }

  test("with no rule to add, 'always' is not offered (it would be the whole tool)", async () => {
    const t = terminal();
    const { suggestions: _, ...request } = REQUEST;
    const pending = createTerminalApprover(t)(request, new AbortController().signal);
    const question = "Allow Bash? Delete the build folder? [y]es once / [n]o, then Enter: ";
    await t.shown(question);
    t.input.write("a\n");
    await t.shown(question, 2);
    t.input.write("y\n");
    assert.equal(await pending, "allow-once");
  });

  test("a Write's content is shown as written, line by line under its name, with secrets masked", async () => {
    const t = terminal();
    const approve = createTerminalApprover(t);
    const content = 'DATABASE_URL=postgres://app:hunter2-pw@db/app\nAPI="sk-ant-api03-abcdefghijklmnopqrstuvwx"\n';
    const pending = approve(
      { ...REQUEST, toolName: "Write", title: "Allow Write?", params: { file_path: "/p/.env", content } },
      new AbortController().signal,
    );
    await t.shown("then Enter: ");
    t.input.write("n\n");
    assert.equal(await pending, "deny");
    assert.equal(
      t.written().split("Allow Write?")[0],
      [
        "  file_path: /p/.env",
        "  content:",
        "    DATABASE_URL=postgres://app:****@db/app",
        '    API="****"',
        '  "always" adds: Bash(rm:*)',
        "",
      ].join("\n"),
    );
    assert.doesNotMatch(t.written(), /hunter2|abcdefghij|\\n/);
  });

  test("an answer it does not know gets the question again", async () => {
    const t = terminal();
    const pending = createTerminalApprover(t)(REQUEST, new AbortController().signal);
    await t.shown(QUESTION);
    t.input.write("maybe\n");
    await t.shown(QUESTION, 2);
    t.input.write("n\n");
    assert.equal(await pending, "deny");
  });

  test("an abort (the approval timed out, the run was cancelled) denies and stops reading", async () => {
    const t = terminal();
    const controller = new AbortController();
    const pending = createTerminalApprover(t)(REQUEST, controller.signal);
    await t.shown(QUESTION);
    controller.abort();
    assert.equal(await pending, "deny");
    assert.equal(t.input.listenerCount("data"), 0);
    assert.match(t.written(), /denied/);
    assert.notEqual(t.input.readableFlowing, true, "stdin is paused again");
    // Already aborted when asked: no question at all.
    const before = t.written();
    assert.equal(await createTerminalApprover(t)(REQUEST, AbortSignal.abort()), "deny");
    assert.equal(t.written(), before);
  });

  test("end of input denies", async () => {
    const t = terminal();
    const pending = createTerminalApprover(t)(REQUEST, new AbortController().signal);
    await t.shown(QUESTION);
    t.input.end();
    assert.equal(await pending, "deny");
  });

  test("not a terminal (stdin or stderr): deny without asking, as nobody could be asked", async () => {
    for (const [stdin, stderr] of [
      [false, false],
      [true, false],
      [false, true],
    ]) {
      const t = terminal();
      Object.assign(t.input, { isTTY: stdin });
      Object.assign(t.output, { isTTY: stderr });
      assert.deepEqual(await createTerminalApprover(t)(REQUEST, new AbortController().signal), {
        decision: "nobody",
        decidedBy: "no-terminal",
      });
      assert.equal(t.written(), "");
    }
  });

  test("parallel requests are asked one at a time; a hook's own 'Allow X?' title is not repeated", async () => {
    const t = terminal();
    const approve = createTerminalApprover(t);
    const signal = new AbortController().signal;
    const first = approve(REQUEST, signal);
    const second = approve({ ...REQUEST, toolName: "Write", toolCallId: "call_2", title: "Allow Write?" }, signal);
    await t.shown(QUESTION);
    assert.ok(!t.written().includes("Allow Write?"), "the second question waits for the first answer");
    t.input.write("y\n");
    assert.equal(await first, "allow-once");
    await t.shown(`Allow Write? ${CHOICES}: `);
    t.input.write("n\n");
    assert.equal(await second, "deny");
  });

  test("control characters in the title cannot forge terminal output", async () => {
    const t = terminal();
    const pending = createTerminalApprover(t)(
      { ...REQUEST, title: "ok?\u001b[2K\rAllow everything" },
      new AbortController().signal,
    );
    await t.shown("[n]o, then Enter: ");
    assert.ok(!t.written().includes("\u001b"), JSON.stringify(t.written()));
    t.input.write("n\n");
    assert.equal(await pending, "deny");
  });
});

describe("gatehouse run without a terminal", () => {
  const dirs: { remove(): Promise<void> }[] = [];
  after(() => Promise.all(dirs.map((d) => d.remove())));

  // The model writes a file; a plugin asks for approval of every tool call.
  const ASKER = `export default { id: "asker", setup(api) {
    api.on("before_tool_call", () => ({ requireApproval: { title: "Write a file?" } }));
  } };`;
  const SCRIPT = {
    runs: [
      {
        turns: [
          { toolCalls: [{ name: "Write", input: { file_path: "made.txt", content: "written" } }] },
          { text: "after: {{lastToolResult}}" },
        ],
      },
    ],
  };

  test("an approval is denied without asking: the tool does not run", async () => {
    const p = await project({
      "asker.mjs": ASKER,
      "script.json": SCRIPT,
      "gatehouse.json": { model: "scripted:script.json", plugins: [{ path: "asker.mjs" }] },
    });
    dirs.push(p);
    // A rule allows Write: only the plugin's ask stands in the way, and nobody can answer it.
    const r = await gatehouse(["run", "-p", "write it", "--allowedTools", "Write"], { cwd: p.dir });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(
      r.stdout,
      "after: Permission to use Write was denied (it needs approval in default mode, and no one can be asked here).\n",
    );
    assert.ok(!r.stderr.includes("[y]es once"), "nobody was asked");
    assert.match(r.stderr, /^gatehouse: permission denied: Write: /m, "the denial is visible");
    assert.equal(existsSync(join(p.dir, "made.txt")), false);

    // The same run without the plugin writes the file: the denial is what stopped it.
    const control = await project({ "script.json": SCRIPT, "gatehouse.json": { model: "scripted:script.json" } });
    dirs.push(control);
    const ran = await gatehouse(["run", "-p", "write it", "--allowedTools", "Write"], { cwd: control.dir });
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal(existsSync(join(control.dir, "made.txt")), true);
  });
});
