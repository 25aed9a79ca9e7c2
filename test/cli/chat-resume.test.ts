// `gatehouse chat` as a daily tool: prompts of several lines (a bracketed paste, `\`+Enter), the
// project's input history across chats (never a prompt a gate blocked), `--continue` and
// `--resume` (for `run` too), and a resumed chat's recap of the last exchanges.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { stripVTControlCharacters } from "node:util";
import { openSqliteStore } from "../../src/store/index.js";
import { cliArgv, gatehouse, tempProjects } from "./helpers.js";
import { gatehouseOnTerminal, parseJson } from "./project-helpers.js";

const PASTE_START = "\x1b[200~";
const PASTE_END = "\x1b[201~";
const UP = "\x1b[A";
const CTRL_D = "\x04";
const TMUX = "/usr/bin/tmux";

/** Blocks prompts that mention "launch codes" at the input gate (UserPromptSubmit-like: before_agent_run). */
const BLOCKER = `export default { id: "blocker", setup(api) {
  api.on("before_agent_run", (e) => e.prompt.includes("launch codes")
    ? { outcome: "block", reason: "internal", message: "Not here." } : undefined);
} };
`;
const BLOCKING_PROJECT = {
  "blocker.mjs": BLOCKER,
  "gatehouse.json": {
    model: "scripted:echo",
    plugins: [{ path: "blocker.mjs", hooks: { allowConversationAccess: true } }],
  },
};

/** Each session's stored user texts, oldest session first. */
async function userTexts(cwd: string): Promise<Map<string, string[]>> {
  const store = openSqliteStore({ path: join(cwd, ".gatehouse", "gatehouse.db") });
  try {
    const found = new Map<string, string[]>();
    for (const s of (await store.listSessions({ limit: 100 })).reverse()) {
      const messages = await store.sessionMessages(s.id);
      found.set(
        s.id,
        messages
          .filter((m) => m.role === "user")
          .flatMap((m) => m.parts.flatMap((p) => (p.type === "text" ? [p.text] : []))),
      );
    }
    return found;
  } finally {
    await store.close();
  }
}

function historyFile(cwd: string): string[] {
  const file = join(cwd, ".gatehouse", "chat-history.jsonl");
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as string);
}

const chat = (cwd: string, keys: string, args: string[] = []) =>
  gatehouseOnTerminal(["chat", "--model", "scripted:echo", ...args], { cwd, input: keys });

describe("gatehouse chat: multi-line prompts and input history", { concurrency: 3 }, () => {
  const fresh = tempProjects();

  test("a bracketed paste of three lines is one prompt; so are lines joined with \\ and Enter", async () => {
    const cwd = await fresh();
    const r = await chat(cwd, `${PASTE_START}one\ntwo\nthree${PASTE_END}\rfirst\\\rsecond\r${CTRL_D}`);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(r.stdout.includes("\x1b[?2004h") && r.stdout.includes("\x1b[?2004l"), "bracketed paste on, then off");
    const [texts] = [...(await userTexts(cwd)).values()];
    assert.deepEqual(texts, ["one\ntwo\nthree", "first\nsecond"], "two turns, each one prompt of several lines");
    assert.match(stripVTControlCharacters(r.stdout), /^one\ntwo\nthree$/m, "the echo of the pasted prompt");
  });

  test("a paste that ends with its newline still waits for Enter, and sends its lines without an empty last one", async () => {
    const cwd = await fresh();
    const r = await chat(cwd, `${PASTE_START}alpha\nbeta\n${PASTE_END}\r${CTRL_D}`);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual([...(await userTexts(cwd)).values()], [["alpha\nbeta"]]);
  });

  test("Ctrl-C at a continuation prompt drops the lines collected so far", async () => {
    const cwd = await fresh();
    const r = await chat(cwd, `dropped\\\r\x03kept\r${CTRL_D}`);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual([...(await userTexts(cwd)).values()], [["kept"]]);
  });

  test("history persists per project: Up in the next chat recalls the last prompt; a blocked prompt is never written", async () => {
    const cwd = await fresh(BLOCKING_PROJECT);
    const first = await chat(cwd, `hello there\rthe launch codes are 1234\r${CTRL_D}`);
    assert.equal(first.code, 0, first.stderr);
    assert.deepEqual(historyFile(cwd), ["hello there"], "only the prompt the store kept");
    const stat = execFileSync("stat", ["-c", "%a", join(cwd, ".gatehouse", "chat-history.jsonl")], {
      encoding: "utf8",
    });
    assert.equal(stat.trim(), "600", "owner-only, like the store");
    // Up recalls "hello there" (the blocked prompt is not in the file to be recalled).
    const second = await chat(cwd, `${UP}\r${CTRL_D}`);
    assert.equal(second.code, 0, second.stderr);
    const sessions = [...(await userTexts(cwd)).values()];
    assert.equal(sessions.length, 2);
    assert.deepEqual(sessions[1], ["hello there"], "the recalled prompt was sent");
    for (const file of ["chat-history.jsonl"])
      assert.ok(
        !readFileSync(join(cwd, ".gatehouse", file), "utf8").includes("launch codes"),
        `${file}: no blocked text`,
      );
  });

  test("a history entry holding an escape sequence is not offered for recall (readline would draw it raw)", async () => {
    const cwd = await fresh({
      ".gatehouse/chat-history.jsonl": `${JSON.stringify("clean one")}\n${JSON.stringify("\u001b]52;c;ZXZpbA==\u0007evil")}\n`,
    });
    const r = await chat(cwd, `${UP}\r${CTRL_D}`);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(!r.stdout.includes("\u001b]52"), "the OSC 52 sequence never reached the terminal");
    assert.deepEqual([...(await userTexts(cwd)).values()], [["clean one"]]);
  });

  test("a real terminal (tmux): a pasted block of three lines is one turn", {
    skip: !existsSync(TMUX) && "tmux is not installed",
  }, async () => {
    const cwd = await fresh();
    const socket = `gatehouse-paste-${process.pid}-${Date.now()}`;
    const status = join(cwd, "status");
    const command = `${cliArgv(["chat", "--model", "scripted:echo", "--session", "s-paste"])
      .map((a) => `'${a}'`)
      .join(" ")}; echo $? > '${status}'`;
    const tmux = (...args: string[]) =>
      execFileSync(TMUX, ["-L", socket, "-f", "/dev/null", ...args], {
        cwd,
        encoding: "utf8",
        env: { PATH: process.env.PATH ?? "", HOME: cwd, TERM: "xterm-256color" },
      });
    const waitFor = async (what: () => boolean, label: string) => {
      const deadline = Date.now() + 40_000;
      while (!what()) {
        if (Date.now() > deadline)
          throw new Error(`timed out waiting for ${label}: ${tmux("capture-pane", "-p", "-t", "chat")}`);
        await delay(25);
      }
    };
    tmux("new-session", "-d", "-s", "chat", "-x", "120", "-y", "30", "-c", cwd, command);
    try {
      await waitFor(() => /^>/m.test(tmux("capture-pane", "-p", "-t", "chat")), "the prompt");
      tmux("set-buffer", "-b", "p", "one\ntwo\nthree");
      // -p: pasted as a bracketed paste, since the chat asked the terminal for it.
      tmux("paste-buffer", "-p", "-b", "p", "-t", "chat");
      tmux("send-keys", "-t", "chat", "Enter");
      await waitFor(() => /^three$/m.test(tmux("capture-pane", "-p", "-t", "chat")), "the reply");
      tmux("send-keys", "-t", "chat", "C-d");
      await waitFor(() => existsSync(status), "the chat to end");
      assert.equal(readFileSync(status, "utf8").trim(), "0");
      assert.deepEqual((await userTexts(cwd)).get("s-paste"), ["one\ntwo\nthree"]);
    } finally {
      spawnSync(TMUX, ["-L", socket, "kill-server"]);
    }
  });
});

describe("gatehouse chat and run: --continue and --resume", { concurrency: 3 }, () => {
  const fresh = tempProjects();

  test("chat --continue resumes the latest session and shows its last exchanges; run --continue adds to it", async () => {
    const cwd = await fresh();
    for (const prompt of ["first question", "second question"]) {
      const r = await gatehouse(["run", "--model", "scripted:echo", "--session", `s-${prompt}`, "-p", prompt], { cwd });
      assert.equal(r.code, 0, r.stderr);
    }
    const resumed = await chat(cwd, `again\r${CTRL_D}`, ["--continue"]);
    assert.equal(resumed.code, 0, resumed.stderr);
    const shown = stripVTControlCharacters(resumed.stdout);
    assert.match(shown, /session s-second question \(resumed, 2 messages\)/);
    assert.match(shown, /^you: second question$/m, "the recap shows the stored prompt");
    assert.match(shown, /^assistant: second question$/m, "and its reply");
    assert.ok(!shown.includes("first question"), "only the resumed session's exchanges");
    const run = await gatehouse(["run", "--model", "scripted:echo", "--continue", "-p", "third"], { cwd });
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual((await userTexts(cwd)).get("s-second question"), ["second question", "again", "third"]);
  });

  test("--continue with no session yet starts one", async () => {
    const cwd = await fresh();
    const r = await gatehouse(["run", "--model", "scripted:echo", "--continue", "-p", "hi"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /no earlier session: starting a new one/);
    assert.equal((await userTexts(cwd)).size, 1);
  });

  test("--resume ID continues that session; an unknown id exits 1; no id without a terminal exits 2; two of the flags exit 2", async () => {
    const cwd = await fresh();
    assert.equal(
      (await gatehouse(["run", "--model", "scripted:echo", "--session", "s-a", "-p", "a"], { cwd })).code,
      0,
    );
    assert.equal(
      (await gatehouse(["run", "--model", "scripted:echo", "--session", "s-b", "-p", "b"], { cwd })).code,
      0,
    );
    const r = await gatehouse(["chat", "--model", "scripted:echo", "--resume", "s-a"], { cwd, input: "more\n" });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual((await userTexts(cwd)).get("s-a"), ["a", "more"]);
    const unknown = await gatehouse(["run", "--model", "scripted:echo", "--resume", "nope", "-p", "x"], { cwd });
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /--resume: no session "nope"/);
    const piped = await gatehouse(["chat", "--model", "scripted:echo", "--resume"], { cwd, input: "x\n" });
    assert.equal(piped.code, 2);
    assert.match(piped.stderr, /--resume: give a session id/);
    const both = await gatehouse(["chat", "--model", "scripted:echo", "--continue", "--session", "s-a"], { cwd });
    assert.equal(both.code, 2);
    assert.match(both.stderr, /--session and --continue: give only one/);
    assert.deepEqual((await userTexts(cwd)).get("s-b"), ["b"], "nothing else was run");
  });

  test("--resume alone on a terminal lists the sessions by title (never a blocked prompt) and resumes the one picked", async () => {
    const cwd = await fresh(BLOCKING_PROJECT);
    for (const [session, prompt] of [
      ["s-old", "plan the garden"],
      ["s-blocked", "the launch codes are 1234"],
      ["s-new", "fix the fence"],
    ] as const) {
      await gatehouse(["run", "--session", session, "-p", prompt], { cwd });
    }
    let answered = false;
    let typed = false;
    const r = await gatehouseOnTerminal(["chat", "--resume"], {
      cwd,
      keepStdinOpen: true,
      onStderr: (soFar, child) => {
        if (!answered && soFar.includes("Resume which")) {
          answered = true;
          const lines = soFar.split("\n");
          const old = lines.findIndex((l) => l.includes("plan the garden"));
          child.stdin?.write(`${lines[old]?.trim().split(".")[0]}\r`);
        }
      },
      onStdout: (soFar, child) => {
        if (!typed && soFar.includes("resumed")) {
          typed = true;
          child.stdin?.end(`and the roses\r${CTRL_D}`);
        }
      },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /fix the fence/);
    assert.match(r.stderr, /plan the garden/);
    assert.match(r.stderr, /\(no prompt\)\s+s-blocked/, "the blocked session has no title");
    assert.ok(!r.stderr.includes("launch codes") && !r.stdout.includes("launch codes"));
    assert.deepEqual((await userTexts(cwd)).get("s-old"), ["plan the garden", "and the roses"]);
  });

  test("sessions rename gives a title, shown by sessions list and the picker's listing; an empty one goes back to the first prompt", async () => {
    const cwd = await fresh();
    assert.equal(
      (await gatehouse(["run", "--model", "scripted:echo", "--session", "s-r", "-p", "first prompt"], { cwd })).code,
      0,
    );
    const renamed = await gatehouse(["sessions", "rename", "s-r", "Garden plans"], { cwd });
    assert.equal(renamed.code, 0, renamed.stderr);
    const listing = async () =>
      (
        parseJson(await gatehouse(["sessions", "list", "--json"], { cwd })) as {
          title: string | null;
          firstPrompt: string | null;
        }[]
      )[0];
    const titleOf = async () => (await listing())?.title;
    assert.equal(await titleOf(), "Garden plans");
    assert.equal((await listing())?.firstPrompt, "first prompt", "the first prompt is listed beside it");
    assert.match((await gatehouse(["sessions", "show", "s-r"], { cwd })).stdout, /title\s+Garden plans/);
    assert.equal((await gatehouse(["sessions", "rename", "s-r", ""], { cwd })).code, 0);
    assert.equal(await titleOf(), "first prompt", "cleared: the first stored prompt again");
    const unknown = await gatehouse(["sessions", "rename", "nope", "x"], { cwd });
    assert.equal(unknown.code, 1);
    const twoLines = await gatehouse(["sessions", "rename", "s-r", "a\nb"], { cwd });
    assert.equal(twoLines.code, 2);
    assert.match(twoLines.stderr, /title: expected one line/);
  });
});
