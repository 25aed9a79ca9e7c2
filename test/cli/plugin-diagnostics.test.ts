import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { gatehouse, tempProjects } from "./helpers.js";
import { parseJson } from "./project-helpers.js";

/** A typo'd hook name next to a working rewrite: the guard it was meant to be would be missing. */
const TYPO = `export default {
  id: "typo",
  setup(api) {
    api.on("before_tool_cal", () => ({ block: true }));
    api.on("message_sending", (event) => ({ content: event.content.toUpperCase() }));
  },
};
`;

/** A typo'd option: the handler would run with the default timeout instead of the one meant. */
const BAD_OPTION = `export default {
  id: "slowpoke",
  setup(api) {
    api.on("message_sending", () => undefined, { timeoutMS: 50 });
  },
};
`;

/** Registers a ★ gate (refused without the grant) and a delivery rewrite that needs no grant. */
const NOSY = `export default {
  id: "nosy",
  setup(api) {
    api.on("before_agent_run", () => ({ outcome: "block", reason: "r", message: "blocked by nosy" }));
    api.on("message_sending", (event) => ({ content: "[nosy] " + event.content }));
  },
};
`;

describe("gatehouse run with plugin diagnostics", { concurrency: 3 }, () => {
  const fresh = tempProjects();

  test("a registration that cannot run (unknown hook) stops the run: exit 2, the file and the hook named, nothing run", async () => {
    const cwd = await fresh({
      "policy/typo.mjs": TYPO,
      "gatehouse.json": { model: "scripted:echo", plugins: [{ path: "policy/typo.mjs" }] },
    });
    const r = await gatehouse(["run", "-p", "hello"], { cwd });
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stdout, "", "the valid rewrite never ran: no reply at all");
    assert.match(r.stderr, /plugin typo \(before_tool_cal\): unknown hook "before_tool_cal"/);
    assert.match(r.stderr, /plugin typo \(\S*policy\/typo\.mjs\) was not loaded as configured/);
  });

  test("a typo'd api.on option stops the run, naming the option", async () => {
    const cwd = await fresh({
      "slowpoke.mjs": BAD_OPTION,
      "gatehouse.json": { model: "scripted:echo", plugins: [{ path: "slowpoke.mjs" }] },
    });
    const r = await gatehouse(["run", "-p", "hello"], { cwd });
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stdout, "");
    assert.match(r.stderr, /plugin slowpoke \(message_sending\): unknown option "timeoutMS"/);
    assert.match(r.stderr, /slowpoke\.mjs\) was not loaded as configured/);
  });

  test("a refused ★ hook is a startup warning and listed by plugins inspect; the run completes and the plugin's other hook acts", async () => {
    const cwd = await fresh({
      "nosy.mjs": NOSY,
      "gatehouse.json": { model: "scripted:echo", plugins: [{ path: "nosy.mjs" }] },
    });
    const r = await gatehouse(["run", "-p", "hello"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "[nosy] hello\n", "the refused gate did not block; the rewrite did apply");
    assert.match(
      r.stderr,
      /plugin nosy \(before_agent_run\): "before_agent_run" reads the conversation; grant it with hooks\.allowConversationAccess: true/,
    );

    const inspected = parseJson(await gatehouse(["plugins", "inspect", "nosy", "--json"], { cwd })) as {
      plugins: { registrations: { hook: string }[]; refused: { hook: string }[] }[];
    };
    const [nosy] = inspected.plugins;
    assert.deepEqual(
      nosy?.refused.map((x) => x.hook),
      ["before_agent_run"],
    );
    assert.deepEqual(
      nosy?.registrations.map((x) => x.hook),
      ["message_sending"],
    );
  });

  test("a TypeScript plugin with a syntax error: the parser's message, file:line:column and a code frame, exit 2", async () => {
    const cwd = await fresh({
      "syntax.ts": 'export default {\n  id: "syntax",\n  setup(api: unknown) {\n    const x = ;\n  },\n};\n',
      "gatehouse.json": { model: "scripted:echo", plugins: [{ path: "./syntax.ts" }] },
    });
    const r = await gatehouse(["run", "-p", "hello"], { cwd });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /cannot load \S*syntax\.ts: SyntaxError: Unexpected token at \S*syntax\.ts:4:14\n/);
    assert.match(r.stderr, /> 4 \| {5}const x = ;\n[^\n]* {4}\| {14}\^\n/);
  });

  test("a setup that throws: the author's message, masked, and the plugin's own file:line:column", async () => {
    const cwd = await fresh({
      "thrower.ts": [
        "export default {",
        '  id: "thrower",',
        "  setup(api: { config?: { team?: string } }) {",
        '    const token = "sk-live-0123456789abcdefghij";',
        '    if (!api.config?.team) throw new Error("config value \'team\' is required (" + token + ")");',
        "  },",
        "};",
        "",
      ].join("\n"),
      "gatehouse.json": { model: "scripted:echo", plugins: [{ path: "./thrower.ts" }] },
    });
    const r = await gatehouse(["run", "-p", "hello"], { cwd });
    assert.equal(r.code, 2, r.stderr);
    assert.match(
      r.stderr,
      /plugin thrower: setup threw Error: config value 'team' is required \(\*\*\*\*\) at \S*thrower\.ts:5:34; plugin not \(re\)loaded/,
    );
    assert.equal(r.stderr.includes("sk-live-0123456789abcdefghij"), false);
  });
});
