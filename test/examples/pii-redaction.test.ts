import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { gatehouse } from "../cli/helpers.js";
import { type ExampleRun, filesContaining, runExampleReadme } from "./readme-commands.js";

const PII = ["ada@acme.example", "+1 (555) 010-0199", "010-0199"];

describe("examples/pii-redaction", () => {
  let run: ExampleRun;
  before(async () => {
    run = await runExampleReadme("pii-redaction");
  });
  after(() => run.remove());

  test("the README's commands succeed: the reply has both redactions (the two plugins compose)", () => {
    assert.equal(run.results.length, 2);
    const [reply, show] = run.results;
    assert.equal(reply?.code, 0, reply?.stderr);
    assert.equal(reply?.stdout, "Your contact at Acme is Ada Lovelace: [email], phone [phone].\n");
    assert.equal(show?.code, 0, show?.stderr);
  });

  test("every assistant message of the run is redacted in the store, the one before the tool call too", async () => {
    const show = run.results[1]?.stdout ?? "";
    assert.match(show, /assistant\s+Let me check the CRM\. Last time the contact was \[email\]\./);
    assert.match(show, /assistant\s+Your contact at Acme is Ada Lovelace: \[email\], phone \[phone\]\./);
    const exported = await gatehouse(
      ["sessions", "export", "pii-demo", "--config", "examples/pii-redaction/gatehouse.json"],
      { cwd: run.root },
    );
    assert.equal(exported.code, 0, exported.stderr);
    for (const text of PII) {
      assert.ok(!show.includes(text) && !exported.stdout.includes(text), `${text} is in the session`);
      assert.deepEqual(await filesContaining(join(run.root, ".gatehouse"), text), [], `${text} is in the data folder`);
    }
  });
});
