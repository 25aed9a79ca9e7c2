import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type ExampleRun, runExampleReadme } from "./readme-commands.js";

interface Line {
  event: string;
  outcome?: string;
  success?: boolean;
  runId: string;
  sessionId: string;
}

describe("examples/audit-logger", () => {
  let run: ExampleRun;
  before(async () => {
    run = await runExampleReadme("audit-logger");
  });
  after(() => run.remove());

  test("the runs complete and block as the README says", () => {
    assert.equal(run.results[0]?.code, 0, run.results[0]?.stderr);
    assert.equal(run.results[0]?.stdout, "Here is my answer to: What is on the agenda today?\n");
    assert.equal(run.results[1]?.code, 3, run.results[1]?.stderr);
    assert.equal(run.results[1]?.stdout, "I can't share secrets.\n");
  });

  test("the log has message_sent and agent_end for each run: the blocked one's notice was delivered too", () => {
    const log = run.results[2]?.stdout ?? "";
    const lines = log
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Line);
    assert.deepEqual(
      lines.map((l) => [l.event, l.outcome ?? null]),
      [
        ["message_sent", null],
        ["agent_end", "completed"],
        ["message_sent", null],
        ["agent_end", "blocked"],
      ],
    );
    assert.equal(lines[0]?.runId, lines[1]?.runId);
    assert.equal(lines[2]?.runId, lines[3]?.runId);
    assert.equal(lines[0]?.success, true);
    assert.notEqual(lines[1]?.sessionId, lines[3]?.sessionId);
    for (const content of ["agenda", "secret launch", "Here is my answer", "can't share"])
      assert.ok(!log.includes(content), `the log holds "${content}"`);
  });
});
