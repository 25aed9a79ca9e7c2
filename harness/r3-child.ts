/**
 * R3's victim: runs R1 scenarios one after another on one store until it is killed, saying on
 * stdout what it starts and finishes. Usage:
 *   node --import tsx harness/r3-child.ts <seed> <first-index> <dir> [postgres-url schema]
 */
import { openStore } from "../src/store/index.js";
import { captureLogger } from "./capture.js";
import { r3Scenario } from "./r3-plan.js";
import { tapPlugin } from "./timeline.js";
import { scenarioGatehouse } from "./world.js";

const [seedArg, fromArg, dir, pgUrl, schema] = process.argv.slice(2);
const seed = Number(seedArg);
const transcriptDir = `${dir}/data/transcripts`;
const store = await openStore(
  pgUrl && schema
    ? { kind: "postgres", url: pgUrl, schema, transcriptDir }
    : { kind: "sqlite", path: `${dir}/data/gatehouse.db`, transcriptDir },
);
const say = (line: string) => process.stdout.write(`${line}\n`);
say("READY");
for (let index = Number(fromArg); ; index++) {
  const scenario = r3Scenario(seed, index);
  const gatehouse = scenarioGatehouse(scenario, {
    store,
    dir: dir as string,
    hookLog: "/dev/null",
    logger: captureLogger().logger,
    plugins: [tapPlugin()],
  });
  say(`SCENARIO ${index}`);
  const sessions = new Map<number, string>();
  for (const run of scenario.runs) {
    const sessionId = sessions.get(run.session);
    const stream = gatehouse.stream({ prompt: run.prompt, ...(sessionId ? { sessionId } : {}) });
    for await (const event of stream) {
      if (event.type === "run-start") {
        sessions.set(run.session, event.sessionId);
        say(`RUN ${index} ${run.tag || "/compact"} ${event.sessionId} ${event.runId}`);
      }
    }
    const result = await stream.result;
    say(`DONE ${index} ${run.tag || "/compact"} ${result.outcome}`);
  }
  await gatehouse.engine.drain();
}
