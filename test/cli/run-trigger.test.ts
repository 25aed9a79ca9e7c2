import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, test } from "node:test";
import { openStore } from "../../src/store/index.js";
import { gatehouse, tempProjects } from "./helpers.js";

/** Writes each firing's run context next to itself, one JSON line per hook. */
const WITNESS = `import { appendFileSync } from "node:fs";
const log = new URL("./ctx.jsonl", import.meta.url);
export default {
  id: "witness",
  setup(api) {
    for (const hook of ["message_received", "before_agent_run", "agent_end"])
      api.on(hook, (_e, ctx) => {
        const { runId, sessionId, trigger, jobId, depth } = ctx;
        appendFileSync(log, JSON.stringify({ hook, runId, sessionId, trigger, jobId, depth }) + "\\n");
        return hook === "before_agent_run" ? { outcome: "pass" } : undefined;
      });
  },
};
`;

describe("gatehouse run --trigger / --job-id", () => {
  const fresh = tempProjects();

  test("--trigger cron --job-id J: the run is stored with both, and every hook's ctx carries them", async () => {
    const cwd = await fresh({
      "witness.mjs": WITNESS,
      "gatehouse.json": {
        model: "scripted:echo",
        plugins: [{ path: "witness.mjs", hooks: { allowConversationAccess: true } }],
      },
    });
    const r = await gatehouse(["run", "--trigger", "cron", "--job-id", "nightly-42", "-p", "report", "--json"], {
      cwd,
    });
    assert.equal(r.code, 0, r.stderr);
    const result = JSON.parse(r.stdout) as { runId: string; sessionId: string; outcome: string };
    assert.equal(result.outcome, "completed");

    const store = await openStore({ kind: "sqlite", path: join(cwd, ".gatehouse", "gatehouse.db") });
    try {
      const run = await store.getRun(result.runId);
      assert.equal(run?.trigger, "cron");
      assert.equal(run?.jobId, "nightly-42");
    } finally {
      await store.close();
    }

    const firings = (await readFile(join(cwd, "ctx.jsonl"), "utf8"))
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(
      firings.map((f) => f.hook),
      ["message_received", "before_agent_run", "agent_end"],
    );
    for (const f of firings)
      assert.deepEqual(f, {
        hook: f.hook,
        runId: result.runId,
        sessionId: result.sessionId,
        trigger: "cron",
        jobId: "nightly-42",
        depth: 0,
      });
  });
});
