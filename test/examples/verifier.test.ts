import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type ExampleRun, runExampleReadme } from "./readme-commands.js";

describe("examples/verifier", () => {
  let run: ExampleRun;
  before(async () => {
    run = await runExampleReadme("verifier");
  });
  after(() => run.remove());

  const result = (i: number) => {
    const r = run.results[i];
    assert.equal(r?.code, 0, r?.stderr);
    return JSON.parse(r?.stdout ?? "") as { outcome: string; reply: string; steps: number };
  };

  test("an answer without a source gets one more pass, and the second answer is delivered", () => {
    const eiffel = result(0);
    assert.equal(eiffel.outcome, "completed");
    assert.equal(eiffel.reply, "The Eiffel Tower is 330 metres tall. [source: toureiffel.paris]");
    assert.equal(eiffel.steps, 2);
  });

  test("the retry cap holds: a model that never complies gets two model calls, no more", () => {
    const everest = result(1);
    assert.equal(everest.outcome, "completed");
    assert.equal(everest.steps, 2);
    assert.equal(everest.reply, "It is 8,849 metres, I am fairly sure.");
  });
});
