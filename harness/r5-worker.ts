/**
 * One of R5's processes: runs turns on the shared sessions, several at once, and prints one
 * JSON line per finished turn. Usage:
 *   node --import tsx harness/r5-worker.ts <worker> <turns> <concurrency> <sessions,...> <dir> [postgres-url schema]
 */
import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";
import { createGatehouse } from "../src/assembly/gatehouse.js";
import { createScriptedModel } from "../src/models/index.js";
import { openStore } from "../src/store/index.js";
import type { Tool } from "../src/tools/types.js";
import { captureLogger } from "./capture.js";

const [worker, turnsArg, concurrencyArg, sessionsArg, dir, pgUrl, schema] = process.argv.slice(2) as string[];
const sessions = (sessionsArg as string).split(",");
const turns = Number(turnsArg);
const store = await openStore(
  pgUrl && schema ? { kind: "postgres", url: pgUrl, schema } : { kind: "sqlite", path: `${dir}/data/gatehouse.db` },
);
/** Holds the run open for a moment, so that turns overlap in time. */
const slow: Tool<{ ms: number }, string> = {
  name: "Slow",
  description: "waits",
  inputSchema: z.object({ ms: z.number() }),
  async execute(input) {
    await sleep(input.ms);
    return "waited";
  },
};
const gatehouse = createGatehouse({
  model: createScriptedModel({
    runs: [
      { turns: [{ text: "working", toolCalls: [{ name: "Slow", input: { ms: 15 } }] }, { text: "done {{prompt}}" }] },
    ],
  }),
  store,
  tools: [slow],
  logger: captureLogger().logger,
  config: { cwd: dir as string },
});
let next = 0;
async function lane(): Promise<void> {
  for (let i = next++; i < turns; i = next++) {
    const tag = `w${worker}t${i}`;
    // Neighbouring turns pick different sessions; workers start at different offsets.
    const sessionId = sessions[(i * 7 + Number(worker) * 3) % sessions.length] as string;
    const prompt = `[${tag}] turn ${i} of worker ${worker}`;
    const start = Date.now();
    const result = await gatehouse.run({ prompt, sessionId });
    const line = {
      tag,
      prompt,
      sessionId,
      runId: result.runId,
      outcome: result.outcome,
      reply: result.reply,
      start,
      end: Date.now(),
    };
    process.stdout.write(`${JSON.stringify(line)}\n`);
  }
}
await Promise.all(Array.from({ length: Number(concurrencyArg) }, lane));
await gatehouse.close();
