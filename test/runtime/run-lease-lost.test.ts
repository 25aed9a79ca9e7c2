// A run holds its session's run lease for its whole life. If another process takes the lease over
// (this one missed its heartbeats for longer than the lease's expiry, so the other could not tell it
// was alive), that process may already be recovering the run: this one must stop, not write on.
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { z } from "zod";
import { openStore } from "../../src/store/index.js";
import type { Tool } from "../../src/tools/types.js";
import { tempDir, withRawDatabase } from "../store/helpers.js";
import { testGatehouse, waitingTool } from "./helpers.js";

const FOREIGN_OWNER = "0000000000000000:4242:123456:cafebabe";

test("a run whose run lease another process took over stops (cancelled) and says why in the log", async () => {
  const dir = tempDir();
  try {
    const options = { kind: "sqlite" as const, path: join(dir.path, "gatehouse.db"), runLock: { ttlMs: 300 } };
    const store = await openStore(options);
    const { tool, started } = waitingTool();
    const { gatehouse, logLines } = testGatehouse(
      { runs: [{ turns: [{ toolCalls: [{ name: "Wait", input: { note: "n" } }] }, { text: "never" }] }] },
      { store, tools: [tool] },
    );
    const running = gatehouse.run({ prompt: "go" });
    await started;
    await withRawDatabase(options, (db) => db.all("UPDATE run_leases SET owner = ?", FOREIGN_OWNER));
    // The lease's heartbeat timer does not keep a process alive (a CLI run must be able to exit); this does.
    const keepAlive = setInterval(() => {}, 1_000);
    const result = await running.finally(() => clearInterval(keepAlive));
    assert.equal(result.outcome, "cancelled");
    assert.ok(
      logLines.some((l) => /another process took over its run lock; the run was stopped/.test(l)),
      logLines.join("\n"),
    );
    await gatehouse.close();
  } finally {
    dir.remove();
  }
});

test("many concurrent runs on the memory store raise no listener-leak warning (its never-lost lease signal is shared)", async () => {
  const RUNS = 12;
  const warnings: Error[] = [];
  const onWarning = (w: Error) => warnings.push(w);
  process.on("warning", onWarning);
  // Every run's tool waits until all of them are in flight, so the lease signal has RUNS listeners at once.
  let arrived = 0;
  let releaseAll!: () => void;
  const allIn = new Promise<void>((resolve) => {
    releaseAll = resolve;
  });
  const gate: Tool<{ note: string }, string> = {
    name: "Gate",
    description: "waits for every run",
    inputSchema: z.object({ note: z.string() }),
    execute: async () => {
      if (++arrived === RUNS) releaseAll();
      await allIn;
      return "in";
    },
  };
  const script = { turns: [{ toolCalls: [{ name: "Gate", input: { note: "n" } }] }, { text: "done" }] };
  const { gatehouse } = testGatehouse({ runs: Array.from({ length: RUNS }, () => script) }, { tools: [gate] });
  try {
    const results = await Promise.all(Array.from({ length: RUNS }, (_, i) => gatehouse.run({ prompt: `run ${i}` })));
    assert.deepEqual(
      results.map((r) => r.outcome),
      Array.from({ length: RUNS }, () => "completed"),
    );
    // A warning is emitted on the next tick after the listener is added: by now it would have been.
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(
      warnings.filter((w) => w.name === "MaxListenersExceededWarning").map((w) => w.message),
      [],
    );
  } finally {
    process.off("warning", onWarning);
    await gatehouse.close();
  }
});
