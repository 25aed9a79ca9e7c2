import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { z } from "zod";
import { renderHooksDoc, timeoutLabel, typeLabel } from "../../scripts/hooks-doc.js";
import { GateVerdictSchema, HOOK_NAMES, HOOKS, type HookSpec } from "../../src/hooks/catalog.js";

const DOC_PATH = new URL("../../docs/hooks.md", import.meta.url);

/** The doc's per-hook sections, keyed by hook name (`### \`name\`` headings). */
function sections(doc: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const part of doc.split(/^### /m).slice(1)) {
    const name = /^`([^`]+)`/.exec(part)?.[1];
    if (name) found.set(name, part.split(/^## /m)[0] as string);
  }
  return found;
}

test("docs/hooks.md is what the catalog renders", () => {
  const checkedIn = readFileSync(DOC_PATH, "utf8");
  assert.ok(
    checkedIn === renderHooksDoc(),
    "docs/hooks.md is out of date with src/hooks/catalog.ts: run `npm run docs` and commit the result",
  );
});

test("every hook, event field and result field of the catalog is documented in its own section", () => {
  const doc = renderHooksDoc();
  const bySection = sections(doc);
  const gateFields = GateVerdictSchema.options.flatMap((o) => Object.keys(o.shape));
  for (const hook of HOOK_NAMES) {
    const spec: HookSpec = HOOKS[hook];
    assert.ok(doc.includes(`[\`${hook}\`](#${hook})`), `${hook} is missing from the summary table`);
    const section = bySection.get(hook);
    assert.ok(section, `${hook} has no section`);
    assert.ok(section.includes(spec.fires), `${hook}: "fires" is missing`);
    for (const field of Object.keys(spec.event.shape))
      assert.match(section, new RegExp(`\`${field}\\??\``), `${hook}: event field ${field} is missing`);
    const resultFields = spec.kind === "gate" ? gateFields : Object.keys(spec.result?.shape ?? {});
    if (spec.kind !== "observe") assert.ok(resultFields.length > 0, `${hook}: no result fields found`);
    // As a table row (`field?`) or inside a documented shape (`{ field: … }`).
    for (const field of resultFields)
      assert.match(
        section,
        new RegExp(`\`${field}\\??\`|[{;] ${field}\\??: `),
        `${hook}: result field ${field} is missing`,
      );
    for (const [field, rule] of Object.entries(spec.rules ?? {})) {
      const results = section.slice(section.indexOf("**Result**"));
      const row = results
        .split("\n")
        .find((line) => line.startsWith(`| \`${field}\``) || line.startsWith(`| \`${field}?\``));
      assert.ok(row?.includes(` ${rule.rule}`), `${hook}: the rule of ${field} is missing`);
      if (rule.rule === "rank" && row)
        for (const value of rule.order) assert.ok(row.includes(`"${value}"`), `${hook}: rank order of ${field}`);
    }
    if (spec.deprecated) assert.ok(section.includes(spec.deprecated), `${hook}: deprecation note is missing`);
    assert.ok(section.includes(timeoutLabel(spec.timeoutMs)), `${hook}: default timeout is missing`);
  }
});

test("the intro names every ctx field and the timeout precedence", () => {
  const doc = renderHooksDoc();
  const intro = doc.slice(0, doc.indexOf("## All hooks"));
  for (const field of [
    "sessionId",
    "sessionKey",
    "runId",
    "parentRunId",
    "parentSessionId",
    "agentId",
    "depth",
    "trigger",
    "channel",
    "jobId",
    "traceparent",
    "hook",
    "pluginId",
    "signal",
  ])
    assert.ok(intro.includes(`| \`${field}\` |`), `ctx.${field} is missing`);
  const order = ["`hooks.timeouts[hook]`", "`hooks.timeoutMs`", "registration's `timeoutMs`", "hook's default"];
  const at = order.map((t) => intro.indexOf(t));
  assert.ok(
    at.every((i, n) => i >= 0 && (n === 0 || i > (at[n - 1] as number))),
    "timeout precedence out of order",
  );
});

test("type labels read the zod schemas", () => {
  assert.equal(typeLabel(z.string()), "string");
  assert.equal(typeLabel(z.array(z.string())), "string[]");
  assert.equal(typeLabel(z.array(z.enum(["a", "b"]))), '("a" | "b")[]');
  assert.equal(typeLabel(z.object({ a: z.string(), b: z.number().optional() })), "{ a: string; b?: number }");
  assert.equal(typeLabel(z.custom<unknown>().meta({ type: "Message[]" })), "Message[]");
  assert.equal(typeLabel(z.object({ n: z.number() }).meta({ type: "Usage" }).optional()), "Usage");
  assert.equal(timeoutLabel(0), "none (synchronous)");
  assert.equal(timeoutLabel(15_000), "15 s");
  assert.equal(timeoutLabel(250), "250 ms");
});
