// A policy file that says two things is an error: a key twice in one object of gatehouse.json,
// a settings file (.claude/settings*.json, --settings) or a scripted model file stops the command
// with exit 2, naming the file, line, column and key, and nothing is run or created.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { gatehouse, tempProjects } from "./helpers.js";

describe("duplicate keys", { concurrency: 4 }, () => {
  const fresh = tempProjects();

  test('gatehouse.json: a second "tools" cannot switch the first off; run and config exit 2, nothing created', async () => {
    const cwd = await fresh({
      "gatehouse.json": '{"model":"scripted:echo","tools":{"deny":["Bash"]},"tools":{"deny":[]}}',
    });
    for (const args of [["run", "-p", "hi"], ["config"], ["hooks", "check"]]) {
      const r = await gatehouse(args, { cwd });
      assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
      assert.match(r.stderr, /gatehouse\.json:1:52: duplicate key "tools" \(first at line 1, column 26\)/);
    }
    assert.equal(existsSync(join(cwd, ".gatehouse")), false, "no store was created");
  });

  test("gatehouse.json: a duplicate nested key names where it is", async () => {
    const cwd = await fresh({
      "gatehouse.json": '{\n  "model": "scripted:echo",\n  "tools": {\n    "deny": ["Bash"],\n    "deny": []\n  }\n}\n',
    });
    const r = await gatehouse(["run", "-p", "hi"], { cwd });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /gatehouse\.json:5:5: duplicate key "deny" in tools \(first at line 4, column 5\)/);
  });

  test('.claude/settings.json: a second "hooks" does not silently remove every hook; hooks check and run exit 2', async () => {
    const hook = '{"matcher":"Bash","hooks":[{"type":"command","command":"exit 2"}]}';
    const cwd = await fresh({
      ".claude/settings.json": `{"hooks":{"PreToolUse":[${hook}]},\n"hooks":{}}`,
    });
    const check = await gatehouse(["hooks", "check"], { cwd });
    assert.equal(check.code, 2, check.stdout);
    assert.match(
      check.stdout,
      /^error: \.claude\/settings\.json:2:1: \(root\): duplicate key "hooks" \(first at line 1, column 2\)/m,
    );
    assert.doesNotMatch(check.stdout, /no problems/);
    const run = await gatehouse(["run", "-p", "hi", "--model", "scripted:echo"], { cwd });
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /duplicate key "hooks"/);
    assert.equal(existsSync(join(cwd, ".gatehouse")), false);
  });

  test(".claude/settings.local.json and --settings (inline and a file) are checked the same", async () => {
    const cwd = await fresh({
      ".claude/settings.local.json": '{"disableAllHooks":true,"disableAllHooks":false}',
      "extra.json": '{"hooks":{"Stop":[{"hooks":[],"hooks":[]}]}}',
    });
    const local = await gatehouse(["hooks", "check"], { cwd });
    assert.equal(local.code, 2);
    assert.match(local.stdout, /settings\.local\.json:1:25: \(root\): duplicate key "disableAllHooks"/);
    const file = await fresh({ "extra.json": '{"hooks":{"Stop":[{"hooks":[],"hooks":[]}]}}' });
    const fromFile = await gatehouse(["hooks", "check", "--settings", "extra.json"], { cwd: file });
    assert.equal(fromFile.code, 2);
    assert.match(fromFile.stdout, /extra\.json:1:31: \(root\): duplicate key "hooks" in hooks\.Stop\[0\]/);
    const inline = await gatehouse(["hooks", "check", "--settings", '{"hooks":{},"hooks":{}}'], { cwd: file });
    assert.equal(inline.code, 2);
    assert.match(inline.stdout, /--settings:1:13: \(root\): duplicate key "hooks"/);
  });

  test("a scripted model file: exit 2 naming the file, line, column and key", async () => {
    const cwd = await fresh({
      "s.json": '{"runs":[{"turns":[{"text":"one","text":"two"}]}]}',
    });
    const r = await gatehouse(["run", "-p", "hi", "--model", "scripted:s.json"], { cwd });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /scripted model file s\.json:1:34: duplicate key "text" in runs\[0\]\.turns\[0\]/);
    assert.equal(r.stdout, "");
  });
});
