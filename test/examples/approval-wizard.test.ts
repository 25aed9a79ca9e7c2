import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { gatehouse } from "../cli/helpers.js";
import { type ExampleRun, runExampleReadme } from "./readme-commands.js";

describe("examples/approval-wizard", () => {
  let run: ExampleRun;
  before(async () => {
    run = await runExampleReadme("approval-wizard");
  });
  after(() => run.remove());

  test("the wizard answers the form's four turns itself", () => {
    assert.equal(run.results.length, 5);
    const [start, amount, purpose] = run.results;
    assert.equal(start?.stdout, "Expense approval, step 1 of 3: what is the amount (for example 120 EUR)?\n");
    assert.equal(amount?.stdout, "Step 2 of 3: what is it for?\n");
    assert.equal(
      purpose?.stdout,
      'Step 3 of 3: submit 120 EUR for "Team lunch with the Acme delegation"? Answer yes, or cancel.\n',
    );
    for (const r of run.results) assert.equal(r.code, 0, r.stderr);
  });

  test("a claimed turn makes no model call", async () => {
    const submitted = JSON.parse(run.results[3]?.stdout ?? "") as Record<string, unknown>;
    assert.equal(submitted.outcome, "claimed");
    assert.equal(submitted.steps, 0);
    assert.equal(
      submitted.reply,
      'Submitted: 120 EUR for "Team lunch with the Acme delegation". Your manager has been asked to approve it.',
    );
    const show = await gatehouse(
      ["sessions", "show", "expense-1", "--json", "--config", "examples/approval-wizard/gatehouse.json"],
      { cwd: run.root },
    );
    const runs = (JSON.parse(show.stdout) as { runs: { status: string }[] }).runs;
    assert.deepEqual(
      runs.map((r) => r.status),
      ["claimed", "claimed", "claimed", "claimed", "completed"],
    );
  });

  test("a turn the wizard does not claim goes to the model", () => {
    assert.equal(run.results[4]?.stdout, "(the model answered) You asked: What is our travel policy?\n");
  });
});
