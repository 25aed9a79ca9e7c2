import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { gatehouse, tempProjects } from "./helpers.js";

const SPACED_ID_PLUGIN = `export default {
  name: "support",
  id: "Support Policy",
  setup() {},
};
`;

describe("a plugin id the audit trail could not keep is a load error that says where", () => {
  const projects = tempProjects();

  test('a module exporting id "Support Policy": exit 2, naming the module file, line and column of the id', async () => {
    const dir = await projects({
      "gatehouse.json": { model: "scripted:echo", plugins: [{ path: "./policy.mjs" }] },
      "policy.mjs": SPACED_ID_PLUGIN,
    });
    const run = await gatehouse(["run", "-p", "hi"], { cwd: dir });
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /policy\.mjs:3:7\b.*id: must be an identifier/);
  });

  test('gatehouse.json giving a plugin the id "Support Policy": exit 2, naming gatehouse.json, line and column', async () => {
    const dir = await projects({
      "gatehouse.json":
        '{\n  "model": "scripted:echo",\n  "plugins": [{ "path": "./policy.mjs", "id": "Support Policy" }]\n}\n',
      "policy.mjs": SPACED_ID_PLUGIN.replace("Support Policy", "support-policy"),
    });
    const run = await gatehouse(["run", "-p", "hi"], { cwd: dir });
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /gatehouse\.json:3:41: plugins\[0\]\.id: must be an identifier/);
  });

  test("control: the same plugin with an identifier loads and the run answers", async () => {
    const dir = await projects({
      "gatehouse.json": { model: "scripted:echo", plugins: [{ path: "./policy.mjs" }] },
      "policy.mjs": SPACED_ID_PLUGIN.replace("Support Policy", "support-policy"),
    });
    const run = await gatehouse(["run", "-p", "hi"], { cwd: dir });
    assert.equal(run.code, 0, run.stderr);
  });
});
