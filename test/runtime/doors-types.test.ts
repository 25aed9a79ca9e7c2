import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

/**
 * The doors by type (issue 30): outside src/runtime/doors/ the store is a `StoreView` and a run a
 * `RunState`, and neither can store or show text. These fixtures are compiled against the real
 * sources with the project's own compiler settings; a bypass must fail to type-check, and the
 * same write through a door's outbox must compile. (TypeScript 7's compiler API is still
 * `unstable/`, so the test runs its `tsc` on a project of just these files: about a second.)
 */

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const TSC = join(ROOT, "node_modules/typescript/bin/tsc");

let dir: string;
let diagnostics: string;

/** An import specifier from the fixture directory to a source of the repository. */
function source(dir: string, path: string): string {
  return relative(dir, join(ROOT, "src", path))
    .split("\\")
    .join("/");
}

const append = `{ sessionId: state.sessionId, runId: state.runId, role: "assistant", parts: [{ type: "text", text: "x" }] }`;

/** Each bypass a file outside the doors might try, one a line, with the error it must meet. */
const BYPASSES = [
  {
    code: `await deps.store.appendMessage(${append});`,
    error: "Property 'appendMessage' does not exist on type 'StoreView'",
  },
  {
    code: `await deps.store.recordCompaction({ sessionId: "s", fromSeq: 1, toSeq: 2, summary: "x" });`,
    error: "Property 'recordCompaction' does not exist on type 'StoreView'",
  },
  {
    code: `await deps.store.rewriteRun(state.runId, ["x"]);`,
    error: "Property 'rewriteRun' does not exist on type 'StoreView'",
  },
  {
    // The library's own handle: `gatehouse.store` is a view too.
    code: `await gatehouse().store.appendMessage(${append});`,
    error: "Property 'appendMessage' does not exist on type 'StoreView'",
  },
  {
    code: `await deps.doors.appendMessage(${append});`,
    error: "Property 'appendMessage' does not exist on type 'Doors'",
  },
  {
    code: `state.emitText({ type: "final", text: "x" });`,
    error: "Property 'emitText' does not exist on type 'RunState'",
  },
  { code: `state.setDelivered("x");`, error: "Property 'setDelivered' does not exist on type 'RunState'" },
  { code: `state.history = [];`, error: "Cannot assign to 'history' because it is a read-only property" },
  { code: `state.steps = 0;`, error: "Cannot assign to 'steps' because it is a read-only property" },
  { code: `state.context.append.push("x");`, error: "Property 'push' does not exist on type 'readonly string[]'" },
];

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "gatehouse-doors-types-"));
  const outside = [
    `import type { RuntimeDeps } from "${source(dir, "runtime/deps.js")}";`,
    `import type { RunState } from "${source(dir, "runtime/state.js")}";`,
    "export async function bypass(deps: RuntimeDeps, state: RunState): Promise<void> {",
    ...BYPASSES.map((b) => `  ${b.code}`),
    "}",
    `declare function gatehouse(): import("${source(dir, "runtime/gatehouse.js")}").Gatehouse;`,
  ];
  // The control: the same write, from a door, through the outbox the doors open.
  const inside = [
    `import type { RuntimeDeps } from "${source(dir, "runtime/deps.js")}";`,
    `import { outbox } from "${source(dir, "runtime/doors/outbox.js")}";`,
    `import type { RunState } from "${source(dir, "runtime/state.js")}";`,
    "export async function door(deps: RuntimeDeps, state: RunState): Promise<void> {",
    "  const out = outbox(deps, state);",
    `  await out.store.appendMessage(${append});`,
    `  out.emitText({ type: "final", text: "x" });`,
    '  out.deliver("x");',
    "}",
  ];
  // ESM, as the sources.
  writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module" }));
  writeFileSync(join(dir, "outside.ts"), outside.join("\n"));
  writeFileSync(join(dir, "door.ts"), inside.join("\n"));
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({
      extends: join(ROOT, "tsconfig.json"),
      compilerOptions: { noEmit: true, rootDir: "/", typeRoots: [join(ROOT, "node_modules/@types")] },
      files: ["outside.ts", "door.ts"],
      include: [],
    }),
  );
  const run = promisify(execFile)(process.execPath, [TSC, "-p", join(dir, "tsconfig.json"), "--pretty", "false"], {
    cwd: dir,
  });
  // tsc exits 2 on type errors, which is what this test expects: its output is the finding.
  diagnostics = await run.then(
    (r) => r.stdout,
    (error: { stdout?: string }) => error.stdout ?? String(error),
  );
});

after(() => rmSync(dir, { recursive: true, force: true }));

describe("outside the doors, storing or showing text does not compile", () => {
  test("store.appendMessage in a file outside doors/ fails to type-check: the store there is a StoreView", () => {
    assert.match(
      diagnostics,
      /outside\.ts\(4,\d+\): error TS2339: Property 'appendMessage' does not exist on type 'StoreView'/,
    );
  });

  test("every other bypass — the other writers, the sealed Doors, a run's text and its fields — fails on its own line", () => {
    for (const [i, bypass] of BYPASSES.entries()) {
      const line = i + 4;
      const found = diagnostics.split("\n").filter((l) => l.startsWith(`outside.ts(${line},`));
      assert.ok(
        found.some((l) => l.includes(bypass.error)),
        `line ${line} (${bypass.code}) should fail with "${bypass.error}"; tsc said:\n${found.join("\n") || diagnostics}`,
      );
    }
  });

  test("the same write through a door's outbox compiles (the control)", () => {
    assert.ok(diagnostics.includes("outside.ts("), `the bypasses were compiled:\n${diagnostics}`);
    assert.deepEqual(
      diagnostics.split("\n").filter((l) => l.startsWith("door.ts")),
      [],
    );
  });
});
