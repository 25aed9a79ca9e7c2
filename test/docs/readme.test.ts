// "Every command in the README is executed by a test." The README's ```sh blocks are run in
// order, through the real CLI, in a fresh project folder, offline:
//
// - `npx gatehouse …` lines are run. A line's `# … exit status N` comment gives the expected
//   status (default 0); `# prints: TEXT` gives the expected output.
// - A block marked `<!-- file: NAME -->` (a plugin, a gatehouse.json) is written to NAME first,
//   so later commands run against what the README shows.
// - `npm …` lines are the developer's commands: not run here (they are CI's own steps), but each
//   must be `npm install`, `npm test` or `npm run SCRIPT` with SCRIPT in package.json.
// - The one exemption: a block marked `<!-- not run by the README test: … -->`, which must be
//   a real-provider example (it sets a provider key with `export …_API_KEY=` or `…_TOKEN=`).
//   Anything else the test cannot run fails it.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { after, before, describe, test } from "node:test";
import { gatehouse, project } from "../cli/helpers.js";
import { codeBlocks, gatehouseArgs, ROOT, shellCommands } from "../examples/readme-commands.js";

const README = join(ROOT, "README.md");
const EXEMPT = /^not run by the README test: /;

describe("README", () => {
  let markdown = "";
  let cwd = "";
  let remove: () => Promise<void> = async () => {};
  before(async () => {
    markdown = await readFile(README, "utf8");
    const p = await project();
    cwd = p.dir;
    remove = p.remove;
    // `import { definePlugin } from "gatehouse"` in the README's plugin resolves to this package.
    await mkdir(join(cwd, "node_modules"));
    await symlink(ROOT, join(cwd, "node_modules", "gatehouse"), "dir");
  });
  after(() => remove());

  test("every gatehouse command in the README runs, in order, with the documented result", async () => {
    const commands = shellCommands(markdown);
    const blocks = codeBlocks(markdown);
    const ran: string[] = [];
    for (const block of blocks) {
      const file = /^file: (\S+)$/.exec(block.note ?? "")?.[1];
      if (file) {
        await mkdir(dirname(join(cwd, file)), { recursive: true });
        await writeFile(join(cwd, file), block.content);
        continue;
      }
      if (block.note !== undefined && EXEMPT.test(block.note)) continue;
      for (const command of commands.filter((c) => c.block === block.index)) {
        const args = gatehouseArgs(command);
        if (args === undefined) continue; // npm lines: checked below
        const expected = Number(/exit status (\d)/.exec(command.comment ?? "")?.[1] ?? 0);
        const r = await gatehouse(args, { cwd: join(cwd, command.dir) });
        assert.equal(r.code, expected, `${command.line}\n${r.stderr}`);
        const prints = /^prints: (.*)$/.exec(command.comment ?? "")?.[1];
        if (prints !== undefined) assert.equal(r.stdout.trim(), prints, command.line);
        if (args[0] === "--version") assert.match(r.stdout, /^\d+\.\d+\.\d+/);
        ran.push(command.line);
      }
    }
    assert.ok(ran.length >= 10, `only ${ran.length} commands ran`);
  });

  test("the only commands not run are the developer's npm commands and the marked real-provider example", async () => {
    const scripts = Object.keys(
      (JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts,
    );
    for (const command of shellCommands(markdown)) {
      if (command.note !== undefined && EXEMPT.test(command.note)) {
        const [first] = command.argv;
        if (first === "export")
          assert.match(command.line, /^export \w+_(API_KEY|TOKEN)=/, `exempt block: ${command.line}`);
        else assert.deepEqual(command.argv.slice(0, 2), ["npx", "gatehouse"], `exempt block: ${command.line}`);
        continue;
      }
      if (gatehouseArgs(command)) continue;
      const [tool, verb, script] = command.argv;
      assert.equal(tool, "npm", `the test cannot run: ${command.line}`);
      if (verb === "run")
        assert.ok(script !== undefined && scripts.includes(script), `npm run ${script} is not a script`);
      else assert.ok(verb === "install" || verb === "test", `unexpected npm command: ${command.line}`);
    }
    const exempt = codeBlocks(markdown).filter((b) => b.note !== undefined && EXEMPT.test(b.note));
    assert.equal(exempt.length, 1, "one real-provider example, and no other exemption");
    assert.match(exempt[0]?.content ?? "", /^export \w+_API_KEY=/m);
  });

  test("every document and example the README links to exists", () => {
    const targets = [...markdown.matchAll(/\]\(((?:docs|examples)\/[^)#]*)\)/g)].map((m) => m[1] as string);
    assert.ok(targets.length > 10);
    for (const target of targets)
      assert.ok(existsSync(join(ROOT, target)), `README links to ${target}, which does not exist`);
  });
});
