import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { gatehouse } from "../cli/helpers.js";
import { type ExampleRun, filesContaining, runExampleReadme } from "./readme-commands.js";

const SECRETS = ["wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "AKIAIOSFODNN7EXAMPLE"];
const FOLDERS = ["examples/withhold-secrets", "examples/withhold-secrets/shell-hook"];

describe("examples/withhold-secrets", () => {
  let run: ExampleRun;
  before(async () => {
    run = await runExampleReadme("withhold-secrets");
  });
  after(() => run.remove());

  test("both variants (plugin and shell hook) replace the output with the notice, of a call that failed too", () => {
    assert.equal(run.results.length, 4);
    run.results.forEach((r, i) => {
      assert.equal(r.code, 0, r.stderr);
      const by = i % 2 === 0 ? "withhold-secrets" : "command-hooks";
      const lead = i < 2 ? "The deploy settings tool returned" : "The failing command returned";
      assert.equal(
        r.stdout,
        `${lead}: [The output of this Bash call was withheld by a policy (${by}): The output contained credentials and was withheld. The tool did run.]\n`,
      );
      for (const secret of SECRETS) assert.ok(!`${r.stdout}${r.stderr}`.includes(secret));
    });
  });

  test("the credentials are stored nowhere, and the audit trail records the withholding", async () => {
    for (const [i, folder] of FOLDERS.entries()) {
      for (const secret of SECRETS)
        assert.deepEqual(
          await filesContaining(join(run.root, folder, ".gatehouse"), secret),
          [],
          `${folder}: ${secret}`,
        );
      const audit = await gatehouse(["audit", "--json"], { cwd: join(run.root, folder) });
      const records = JSON.parse(audit.stdout) as { hook: string; pluginId: string; outcome: string }[];
      const by = i === 0 ? "withhold-secrets" : "command-hooks";
      // Each call: the allow rule that let it run, then the withholding.
      assert.deepEqual(
        records.map((r) => [r.hook, r.pluginId, r.outcome]),
        [
          ["permission", "permissions", "approve"],
          ["after_tool_call", by, "block"],
          ["permission", "permissions", "approve"],
          ["after_tool_call", by, "block"],
        ],
      );
    }
  });
});
