import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { gatehouse, project } from "./helpers.js";
import { gatehouseInProcess } from "./in-process.js";
import { ESC, gatehouseOnTty, parseJson, uncolored } from "./project-helpers.js";

const REASON = "INTERNAL-9c1e: customer is on the watch list";
const BLOCKED_PROMPT = "forbidden request about project orion";
const CLAIMED_PROMPT = "form: start the wizard";

/** Blocks "forbidden" prompts (category "watchlist") and answers "/form" prompts itself. */
const POLICY = `export default {
  id: "policy",
  setup(api) {
    api.on("before_agent_run", (e) =>
      e.prompt.includes("forbidden")
        ? { outcome: "block", reason: ${JSON.stringify(REASON)}, message: "Not available.", category: "watchlist" }
        : { outcome: "pass" });
    api.on("before_agent_reply", (e) =>
      e.cleanedBody.startsWith("form:")
        ? { handled: true, reply: { text: "Form step 1" }, reason: ${JSON.stringify(REASON)} }
        : undefined);
  },
};
`;

const CONFIG = {
  model: "scripted:echo",
  plugins: [{ path: "policy.mjs", hooks: { allowConversationAccess: true } }],
};

interface Shown {
  at: string;
  hook: string;
  pluginId: string;
  outcome: string;
  category: string | null;
  sessionId: string | null;
  runId: string | null;
}

describe("gatehouse audit", { concurrency: 4 }, () => {
  const dirs: { remove(): Promise<void> }[] = [];
  after(() => Promise.all(dirs.map((d) => d.remove())));
  let cwd = "";
  before(async () => {
    const p = await project({ "gatehouse.json": CONFIG, "policy.mjs": POLICY });
    dirs.push(p);
    cwd = p.dir;
    for (const [session, prompt] of [
      ["a", BLOCKED_PROMPT],
      ["a", "an allowed question"],
      ["b", CLAIMED_PROMPT],
      ["b", BLOCKED_PROMPT],
    ] as const) {
      const r = await gatehouseInProcess(["run", "--session", session, "-p", prompt], { cwd });
      assert.ok(r.code === 0 || r.code === 3, r.stderr);
    }
  });

  test("prints every decision, oldest first: time, hook, plugin, outcome, category, session, run", async () => {
    const r = await gatehouse(["audit"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trimEnd().split("\n");
    assert.match(lines[0] ?? "", /^TIME\s+HOOK\s+PLUGIN\s+OUTCOME\s+CATEGORY\s+SESSION\s+RUN$/);
    assert.equal(lines.length, 4);
    assert.match(lines[1] ?? "", /^\S+ \S+Z\s+before_agent_run\s+policy\s+block\s+watchlist\s+a\s+[0-9a-f-]{36}$/);
    assert.match(lines[2] ?? "", /^\S+ \S+Z\s+before_agent_reply\s+policy\s+claim\s+-\s+b\s+[0-9a-f-]{36}$/);
    assert.match(lines[3] ?? "", /\sbefore_agent_run\s+policy\s+block\s+watchlist\s+b\s/);
  });

  test("never shows a reason or any content, in the table or in JSON", async () => {
    for (const args of [["audit"], ["audit", "--json"]]) {
      const r = await gatehouseInProcess(args, { cwd });
      assert.equal(r.code, 0, r.stderr);
      for (const secret of [REASON, BLOCKED_PROMPT, CLAIMED_PROMPT, "Not available.", "Form step 1"])
        assert.ok(!r.stdout.includes(secret), `${args.join(" ")} shows ${secret}`);
    }
  });

  test("--json is an array of records with exactly the sanitized fields", async () => {
    const records = parseJson(await gatehouseInProcess(["audit", "--json"], { cwd })) as Shown[];
    assert.equal(records.length, 3);
    for (const record of records)
      assert.deepEqual(Object.keys(record).sort(), [
        "at",
        "category",
        "hook",
        "outcome",
        "pluginId",
        "runId",
        "sessionId",
      ]);
    assert.deepEqual(
      records.map((r) => [r.hook, r.pluginId, r.outcome, r.category, r.sessionId]),
      [
        ["before_agent_run", "policy", "block", "watchlist", "a"],
        ["before_agent_reply", "policy", "claim", null, "b"],
        ["before_agent_run", "policy", "block", "watchlist", "b"],
      ],
    );
    assert.ok(records.every((r) => !Number.isNaN(Date.parse(r.at))));
  });

  test("--session keeps one session's records; --limit keeps the most recent", async () => {
    const onlyB = parseJson(await gatehouseInProcess(["audit", "--json", "--session", "b"], { cwd })) as Shown[];
    assert.deepEqual(
      onlyB.map((r) => r.outcome),
      ["claim", "block"],
    );
    const last = parseJson(await gatehouseInProcess(["audit", "--json", "--limit", "1"], { cwd })) as Shown[];
    assert.deepEqual(
      last.map((r) => [r.sessionId, r.outcome]),
      [["b", "block"]],
    );
    assert.deepEqual(parseJson(await gatehouseInProcess(["audit", "--json", "--session", "nobody"], { cwd })), []);
  });

  test("--since takes a duration or an ISO date; anything else exits 2", async () => {
    const since = async (value: string) =>
      (parseJson(await gatehouseInProcess(["audit", "--json", "--since", value], { cwd })) as Shown[]).length;
    assert.equal(await since("1h"), 3);
    assert.equal(await since("7d"), 3);
    assert.equal(await since("2000-01-01"), 3);
    assert.equal(await since("2999-01-01T00:00:00Z"), 0);
    const combined = parseJson(
      await gatehouseInProcess(["audit", "--json", "--since", "1d", "--session", "a", "--limit", "5"], { cwd }),
    ) as Shown[];
    assert.deepEqual(
      combined.map((r) => r.sessionId),
      ["a"],
    );
    for (const bad of ["yesterday", "5 parsecs", "2026-13-45"]) {
      const r = await gatehouseInProcess(["audit", "--since", bad], { cwd });
      assert.equal(r.code, 2, bad);
      assert.match(r.stderr, /--since: expected an ISO date or time .* or a duration like 30m, 1h, 7d/);
    }
  });

  test("a project without records says so", async () => {
    const p = await project();
    dirs.push(p);
    const r = await gatehouseInProcess(["audit"], { cwd: p.dir });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "no audit records\n");
    assert.deepEqual(parseJson(await gatehouseInProcess(["audit", "--json"], { cwd: p.dir })), []);
  });

  test("colored on a terminal, never with NO_COLOR; --help documents the exit statuses", async () => {
    const colored = await gatehouseOnTty(["audit"], { cwd });
    assert.ok(colored.stdout.includes(ESC));
    const plain = await gatehouseOnTty(["audit"], { cwd, env: { NO_COLOR: "1" } });
    assert.ok(!plain.stdout.includes(ESC));
    assert.equal(plain.stdout, uncolored(colored.stdout));
    const help = await gatehouseInProcess(["audit", "--help"], { cwd });
    assert.match(
      help.stdout,
      /Exit status:\n {2}0 {2}done\n {2}1 {2}the store could not be opened or read\n {2}2 {2}bad input/,
    );
  });
});
