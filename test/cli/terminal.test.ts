// Terminal injection: what a model (or a page it read) writes must not reach the terminal as
// control: no clipboard writes (OSC 52), erased or repainted lines, colors, bells or reordered
// text — in replies, streamed deltas (a sequence split across them too), tool labels, approval
// prompts and notices, piped or on a terminal. `--json` keeps the text exact, escaped.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  PLACEHOLDER as P,
  TerminalSanitizer,
  terminalJson,
  terminalLine,
  terminalText,
} from "../../src/cli/terminal.js";
import { gatehouse, tempProjects } from "./helpers.js";
import { gatehouseOnTerminal, gatehouseOnTty } from "./project-helpers.js";

const ESC = "\u001b";
const BEL = "\u0007";
/** Every trick at once: OSC 52 clipboard write, cursor up, line erase + CR, a color, BEL, bidi override and isolate, C1 CSI. */
const ATTACK = `A${ESC}]52;c;ZXZpbA==${BEL}B${ESC}[5A${ESC}[2K\rC${ESC}[31mD${ESC}[0m${BEL}E\u202eF\u2066G\u009b2JH`;
const SHOWN = `A${P}B${P}${P}${P}C${P}D${P}${P}E${P}F${P}G${P}2JH`;

/** Model-made control in `text`: any of the sequences above, or a raw character they use. */
function injected(text: string): string[] {
  const found: string[] = [];
  for (const [name, needle] of [
    ["OSC", `${ESC}]`],
    ["cursor up", `${ESC}[5A`],
    ["color red", `${ESC}[31m`],
    ["BEL", BEL],
    ["RLO", "\u202e"],
    ["LRI", "\u2066"],
    ["C1 CSI", "\u009b"],
  ] as const) {
    if (text.includes(needle)) found.push(name);
  }
  return found;
}

describe("the terminal sanitizer", () => {
  test("escape sequences, controls and bidi controls become one placeholder each; text, newlines and tabs stay", () => {
    assert.equal(terminalText(ATTACK), SHOWN);
    assert.equal(terminalText("line 1\r\nline 2\n\tindented ünïcode 🙂"), "line 1\nline 2\n\tindented ünïcode 🙂");
    assert.equal(
      terminalText(`${ESC}P1$r${ESC}\\x${ESC}_apc${ESC}\\y${ESC}(Bz${ESC}7w\u007f`),
      `${P}x${P}y${P}z${P}w${P}`,
    );
  });

  test("a sequence split at every possible point is caught the same", () => {
    for (let cut = 0; cut <= ATTACK.length; cut++) {
      for (let cut2 = cut; cut2 <= ATTACK.length; cut2 += 7) {
        const s = new TerminalSanitizer();
        const out =
          s.push(ATTACK.slice(0, cut)) + s.push(ATTACK.slice(cut, cut2)) + s.push(ATTACK.slice(cut2)) + s.end();
        assert.equal(out, SHOWN, `cut at ${cut} and ${cut2}`);
      }
    }
    const s = new TerminalSanitizer();
    assert.equal([...ATTACK].map((c) => s.push(c)).join("") + s.end(), SHOWN, "one character at a time");
  });

  test("what is held back is bounded: an unterminated OSC gives way at a newline, at the end, or past its length cap", () => {
    const s = new TerminalSanitizer();
    assert.equal(s.push(`x${ESC}]0;title`), "x");
    assert.equal(s.push(" more\nnext"), `${P}]0;title more\nnext`);
    assert.equal(terminalText(`${ESC}]52;c;abc`), `${P}]52;c;abc`);
    const long = `${ESC}]${"a".repeat(600)}`;
    const t = new TerminalSanitizer();
    assert.equal(t.push(long), `${P}]${"a".repeat(600)}`);
    assert.equal(terminalText(`trailing CR\r`), `trailing CR${P}`);
  });

  test("a line: sanitized, then newlines and tabs as spaces", () => {
    assert.equal(terminalLine(`a\nb\tc${ESC}[2Kd\u2028e`), `a b c${P}d e`);
  });

  test("JSON for a terminal escapes C1, bidi controls and line separators, and reads back exactly", () => {
    const value = { text: `${ATTACK}\u2028` };
    const json = terminalJson(value);
    assert.deepEqual(injected(json), []);
    assert.ok(!json.includes(ESC) && !json.includes("\r"));
    assert.deepEqual(JSON.parse(json), value);
  });
});

describe("model text through the CLI", { concurrency: 4 }, () => {
  const fresh = tempProjects();
  const script = { runs: [{ turns: [{ text: ATTACK, chunks: 1000 }] }] };

  test("run: the reply is sanitized, piped and on a terminal", async () => {
    const cwd = await fresh({ "s.json": script });
    for (const run of [gatehouse, gatehouseOnTty]) {
      const r = await run(["run", "-p", "hi", "--model", "scripted:s.json"], { cwd, env: { NO_COLOR: "1" } });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, `${SHOWN}\n`);
      assert.deepEqual(injected(r.stdout + r.stderr), []);
    }
  });

  test("run --json: the reply is exact, escaped; nothing raw reaches the terminal", async () => {
    const cwd = await fresh({ "s.json": script });
    const r = await gatehouse(["run", "-p", "hi", "--model", "scripted:s.json", "--json"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(injected(r.stdout), []);
    assert.ok(!r.stdout.includes(ESC) && !r.stdout.includes("\r"));
    assert.equal((JSON.parse(r.stdout) as { reply: string }).reply, ATTACK);
  });

  test("run: a block notice and a failure message are sanitized too", async () => {
    const blocker = `export default { id: "b", setup(api) { api.on("before_agent_run", () => ({ outcome: "block", reason: "r", message: ${JSON.stringify(ATTACK)} })); } };`;
    const cwd = await fresh({
      "b.mjs": blocker,
      "s.json": { runs: [{ turns: [{ error: ATTACK }] }] },
      "gatehouse.json": { plugins: [{ path: "b.mjs", hooks: { allowConversationAccess: true } }] },
    });
    const blocked = await gatehouseOnTty(["run", "-p", "hi", "--model", "scripted:echo"], {
      cwd,
      env: { NO_COLOR: "1" },
    });
    assert.equal(blocked.code, 3, blocked.stderr);
    assert.equal(blocked.stdout, `${SHOWN}\n`);
    const failed = await gatehouse(["run", "-p", "hi", "--model", "scripted:s.json", "--config", "none.json"], {
      cwd: await fresh({ "none.json": {}, "s.json": { runs: [{ turns: [{ error: ATTACK }] }] } }),
    });
    assert.equal(failed.code, 1, failed.stderr);
    assert.deepEqual(injected(failed.stderr), []);
    assert.match(failed.stderr, /run failed: .*B/);
  });

  test("chat on a terminal: streamed deltas (every sequence split), the tool label and the approval prompt", async () => {
    const command = `ls ${ESC}]52;c;ZXZpbA==${BEL}\u202eexe.txt`;
    const cwd = await fresh({
      "s.json": {
        runs: [
          {
            turns: [
              { text: ATTACK, chunks: 1000, toolCalls: [{ name: "Bash", input: { command } }] },
              { text: "after" },
            ],
          },
        ],
      },
      "gatehouse.json": {
        model: "scripted:s.json",
        hooks: {
          PreToolUse: [
            {
              matcher: "Bash",
              hooks: [
                {
                  type: "command",
                  // The reason, shown above the question, carries a color and a bidi override (JSON-escaped).
                  command: `printf '%s\\n' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"\\u001b[31mcheck\\u202e"}}'`,
                },
              ],
            },
          ],
        },
      },
    });
    let answered = false;
    let left = false;
    const r = await gatehouseOnTerminal(["chat"], {
      cwd,
      env: { NO_COLOR: "1" },
      input: "go\r",
      keepStdinOpen: true,
      onStdout: (soFar, child) => {
        // Allowed: the call runs (and fails: no such file), so its label is printed with its result.
        if (!answered && soFar.includes("[y]es once")) answered = child.stdin?.write("y\r") ?? false;
        if (answered && !left && soFar.includes("after")) {
          left = true;
          child.stdin?.end("/exit\r");
        }
      },
    });
    assert.ok(answered && left, r.stdout);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(injected(r.stdout + r.stderr), []);
    assert.ok(r.stdout.includes(SHOWN), "the streamed reply, sanitized as a whole");
    assert.ok(r.stdout.includes(`Bash(ls ${P}${P}exe.txt)`), "the tool label");
    assert.ok(r.stdout.includes(`${P}check${P}`), "the hook's reason above the approval question");
  });
});
