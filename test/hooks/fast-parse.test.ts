import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { z } from "zod";
import { HOOK_NAMES, HOOKS, type HookSpec } from "../../src/hooks/catalog.js";
import { compileFastParse } from "../../src/hooks/fast-parse.js";
import { engineWithLog, toolEvent } from "./helpers.js";

const SAMPLES: readonly unknown[] = [
  true,
  false,
  "",
  "text",
  "finalize",
  "revise",
  0,
  1.5,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  null,
  undefined,
  {},
  [],
  ["a"],
  { text: "x" },
];

/** Objects built from a schema's own keys (one and two at a time), plus some that are not plain. */
function candidates(schema: z.ZodObject): unknown[] {
  const keys = [...Object.keys(schema.shape), "bogus"];
  const out: unknown[] = [{}, null, [], "x", Object.create(null), new (class Result {})()];
  for (const key of keys) for (const value of SAMPLES) out.push({ [key]: value });
  for (const a of keys)
    for (const b of keys)
      if (a !== b) for (const value of SAMPLES) out.push({ [a]: value, [b]: true }, { [a]: value, [b]: "text" });
  const inherited = Object.create({ bogus: true });
  inherited[keys[0] as string] = true;
  out.push(inherited);
  return out;
}

/** Every hook's result schema, and one with the field types no hook uses yet. */
function resultSchemas(): [string, z.ZodObject][] {
  const synthetic = z.strictObject({
    count: z.number().optional(),
    level: z.enum(["text", "finalize"]).optional(),
    handled: z.boolean(),
  });
  return [
    ...HOOK_NAMES.flatMap((h) => {
      const schema = (HOOKS[h] as HookSpec).result;
      return schema ? [[h, schema] as [string, z.ZodObject]] : [];
    }),
    ["synthetic", synthetic],
  ];
}

describe("fast result parsing", () => {
  test("for every hook's result schema, whatever the shortcut accepts zod accepts, with the same output", () => {
    let accepted = 0;
    for (const [hook, schema] of resultSchemas()) {
      const fast = compileFastParse(schema);
      if (fast === undefined) continue;
      for (const value of candidates(schema)) {
        const shortcut = fast(value);
        if (shortcut === undefined) continue;
        accepted++;
        const parsed = schema.safeParse(value);
        assert.ok(
          parsed.success,
          `${hook}: ${String(JSON.stringify(value))} accepted by the shortcut, rejected by zod`,
        );
        assert.deepStrictEqual(shortcut, parsed.data, `${hook}: ${String(JSON.stringify(value))}`);
      }
    }
    assert.ok(accepted > 100, `the shortcut took ${accepted} candidates`);
  });

  test("the shortcut takes the common results and leaves everything else to zod", () => {
    const toolCall = compileFastParse(HOOKS.before_tool_call.result);
    assert.deepEqual(toolCall?.({ block: false }), { block: false });
    assert.deepEqual(toolCall?.({ block: true, blockReason: "no" }), { block: true, blockReason: "no" });
    for (const other of [
      { block: "no" },
      { block: false, extra: 1 },
      { params: {} },
      { requireApproval: { title: "t" } },
    ])
      assert.equal(toolCall?.(other), undefined, JSON.stringify(other));
    assert.deepEqual(compileFastParse(HOOKS.inbound_claim.result)?.({ handled: true }), { handled: true });
    assert.equal(compileFastParse(HOOKS.inbound_claim.result)?.({ reply: "x" }), undefined, "handled is required");
    const finalize = compileFastParse(HOOKS.before_agent_finalize.result);
    assert.deepEqual(finalize?.({ action: "revise" }), { action: "revise" });
    assert.equal(finalize?.({ action: "maybe" }), undefined);
  });

  test("fields with checks, formats or refinements are never shortcut", () => {
    const fields = compileFastParse(
      z.strictObject({
        count: z.int().optional(),
        name: z.string().min(1).optional(),
        mail: z.email().optional(),
        flag: z.coerce.boolean().optional(),
      }),
    );
    for (const value of [{ count: 1 }, { count: 1.5 }, { name: "" }, { mail: "x" }, { flag: "yes" }])
      assert.equal(fields?.(value), undefined, JSON.stringify(value));
    const refined = z.strictObject({ a: z.string().optional() }).refine((r) => r.a !== "forbidden");
    assert.equal(compileFastParse(refined), undefined);
    assert.equal(
      compileFastParse(z.strictObject({ a: z.string().min(1) })),
      undefined,
      "a required field it cannot check",
    );
  });

  test("a wrongly typed result on the shortcut's hooks still fails closed", async () => {
    const { engine } = engineWithLog();
    engine.on("typo", "before_tool_call", () => ({ block: "yes" }) as never);
    const outcome = await engine.emit("before_tool_call", toolEvent);
    assert.deepEqual(outcome.decidedBy, { hook: "before_tool_call", pluginId: "typo", cause: "invalid" });
  });
});
