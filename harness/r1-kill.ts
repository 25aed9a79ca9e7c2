/**
 * R1's victim for the memory store: runs one scenario on a memory store whose transcripts go
 * under `<dir>/data/transcripts`, and SIGKILLs itself at the scenario's chosen hook emission
 * (the n-th `engine.emit`, counted across its runs). Usage:
 *   node --import tsx harness/r1-kill.ts '{"scenario": …, "dir": "…", "mcpUrl": "…"}'
 */
import { join } from "node:path";
import type { HookName } from "../src/hooks/index.js";
import { openMemoryStore } from "../src/store/index.js";
import { captureLogger } from "./capture.js";
import type { Scenario } from "./scenario.js";
import { registerMcpResults, scenarioGatehouse } from "./world.js";

const { scenario, dir, mcpUrl } = JSON.parse(process.argv[2] as string) as {
  scenario: Scenario;
  dir: string;
  mcpUrl?: string;
};
const atEmit = scenario.kill?.atEmit ?? Number.POSITIVE_INFINITY;
registerMcpResults(scenario.mcp);
const gatehouse = scenarioGatehouse(scenario, {
  store: openMemoryStore({ transcriptDir: join(dir, "data", "transcripts") }),
  dir,
  hookLog: "/dev/null",
  logger: captureLogger().logger,
  ...(mcpUrl && Object.keys(scenario.mcp).length ? { mcpUrl } : {}),
});
const engine = gatehouse.engine as unknown as { emit: (hook: HookName, event: unknown) => unknown };
const emit = engine.emit.bind(engine);
let emitted = 0;
engine.emit = (hook, event) => {
  if (++emitted === atEmit) process.kill(process.pid, "SIGKILL");
  return emit(hook, event);
};
const sessions = new Map<number, string>();
for (const run of scenario.runs) {
  const sessionId = sessions.get(run.session);
  const result = await gatehouse.run({ prompt: run.prompt, ...(sessionId ? { sessionId } : {}) });
  sessions.set(run.session, result.sessionId);
}
// Not killed: the scenario had fewer emissions. A normal end leaves nothing either.
await gatehouse.close();
process.exit(0);
