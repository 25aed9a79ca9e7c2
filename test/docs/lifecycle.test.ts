import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, describe, test } from "node:test";
import { HOOK_NAMES, type HookName, isHookName } from "../../src/hooks/index.js";
import { currentRunContext } from "../../src/hooks/run-context.js";
import type { ScriptInput } from "../../src/models/index.js";
import type { PluginDefinition } from "../../src/plugins/index.js";
import type { Gatehouse } from "../../src/runtime/gatehouse.js";
import { plugin, recorder, testGatehouse } from "../runtime/helpers.js";

/**
 * docs/lifecycle.md against the code: real runs on every path record each hook as it is emitted,
 * and, run by run, the steps the doc puts those hooks in must follow its order (a model turn may
 * go back from step 11 to step 10). Every hook of the catalog must be named in the doc's steps.
 */

const DOC = readFileSync(new URL("../../docs/lifecycle.md", import.meta.url), "utf8");
/** Step number → the catalog hooks its text names. Hooks of "Whenever a message is stored" may fire at any step. */
const { steps, anytime } = parseSteps(DOC);

function parseSteps(doc: string): { steps: Map<number, Set<HookName>>; anytime: Set<HookName> } {
  const section = doc.slice(doc.indexOf("## Steps"), doc.indexOf("\n## ", doc.indexOf("## Steps") + 1));
  const hooksIn = (text: string) =>
    new Set([...text.matchAll(/`([a-z_]+)`/g)].map((m) => m[1] as string).filter(isHookName));
  const found = new Map<number, Set<HookName>>();
  const items = section.split(/^(?=\d+\. \*\*)/m).slice(1);
  for (const item of items) {
    const number = Number(/^(\d+)\./.exec(item)?.[1]);
    const [body, rest] = item.split("**Whenever a message is stored**");
    found.set(number, hooksIn(body as string));
    if (rest !== undefined) return { steps: found, anytime: hooksIn(rest) };
  }
  return { steps: found, anytime: new Set() };
}

/** The hooks emitted during one scenario, in emission order, each with the run it fired in. */
interface Emitted {
  readonly hook: HookName;
  readonly runId: string;
}

function tap(gatehouse: Gatehouse): Emitted[] {
  const emitted: Emitted[] = [];
  const engine = gatehouse.engine as unknown as { emit: (hook: HookName, event: unknown) => unknown };
  const emit = engine.emit.bind(engine);
  engine.emit = (hook, event) => {
    emitted.push({ hook, runId: currentRunContext()?.runId ?? "" });
    return emit(hook, event);
  };
  return emitted;
}

/** Problems with the order of one run's hooks, measured against the doc's steps. */
function orderProblems(emitted: readonly Emitted[]): string[] {
  const problems: string[] = [];
  const byRun = new Map<string, Emitted[]>();
  for (const e of emitted) byRun.set(e.runId, [...(byRun.get(e.runId) ?? []), e]);
  for (const [runId, hooks] of byRun) {
    let at = 0;
    const path: string[] = [];
    for (const { hook } of hooks) {
      if (anytime.has(hook)) continue;
      const candidates = [...steps].filter(([, names]) => names.has(hook)).map(([n]) => n);
      // The next step that names the hook, not before this one; a finalize revision goes back to step 10.
      const next = candidates.filter((n) => n >= at || (at === 11 && n === 10)).sort((a, b) => a - b)[0];
      path.push(`${hook}@${next ?? "?"}`);
      if (next === undefined) {
        problems.push(
          `run ${runId || "(none)"}: ${hook} fired after step ${at}, where the doc has it only at ${candidates.join(", ") || "no step"} (${path.join(" ")})`,
        );
        break;
      }
      at = next;
    }
  }
  return problems;
}

const TURN: ScriptInput = {
  runs: [
    { match: "^Summarize|^You write", turns: [{ text: "summary" }] },
    { match: "^child task", turns: [{ text: "child answer" }] },
    {
      turns: [
        { text: "early words" },
        {
          toolCalls: [
            { name: "Echo", input: { text: "hi" } },
            { name: "Agent", input: { description: "d", prompt: "child task" } },
          ],
        },
        { text: "done" },
        { text: "revised" },
      ],
    },
  ],
};

const everything: PluginDefinition = plugin("everything", (api) => {
  api.on("before_tool_call", (e) => (e.toolName === "Echo" ? { requireApproval: { title: "Echo?" } } : undefined));
  api.on("before_agent_finalize", (_e, ctx) =>
    ctx.depth === 0 ? { action: "revise", retry: { instruction: "once more" } } : undefined,
  );
  api.registerCommand("hello", { description: "says hello", run: () => "hello back" });
  api.on("inbound_claim", (e) => (e.content === "routed" ? { handled: true, reply: "taken" } : undefined));
  api.on("before_agent_reply", (e) =>
    e.cleanedBody === "form" ? { handled: true, reply: { text: "step 1" } } : undefined,
  );
  api.on("before_input", (e) => (e.prompt === "blocked at the door" ? { outcome: "block", reason: "r" } : undefined));
  api.on("before_agent_run", (e) =>
    e.prompt === "blocked at the run" ? { outcome: "block", reason: "r" } : undefined,
  );
});

describe("docs/lifecycle.md is the order the code fires hooks in", () => {
  const closers: (() => Promise<void>)[] = [];
  after(async () => {
    for (const close of closers) await close();
  });
  const fired = new Set<HookName>();

  test("the doc numbers its steps 0 to 13 and names every hook of the catalog", () => {
    assert.deepEqual(
      [...steps.keys()],
      Array.from({ length: 14 }, (_, i) => i),
    );
    const named = new Set([...anytime, ...[...steps.values()].flatMap((s) => [...s])]);
    assert.deepEqual(
      HOOK_NAMES.filter((h) => !named.has(h)),
      [],
    );
  });

  for (const [name, prompts] of [
    ["a model turn: compaction, approval, a tool, a sub-agent, a revision", ["first", "please work"]],
    [
      "slash commands: /compact with instructions, a plugin's command, /reset",
      ["first", "/compact keep the names", "/hello", "/reset"],
    ],
    ["claims", ["form", "routed"]],
    ["blocks at the input door and at the run gate", ["blocked at the door", "blocked at the run"]],
  ] as const) {
    test(`${name}: each run's hooks fire in the doc's order`, async () => {
      const rec = recorder();
      const { gatehouse } = testGatehouse(TURN, {
        plugins: [rec.plugin, everything],
        subagents: true,
        approver: async () => "allow-once",
        config: { compaction: { contextTokens: 1, keepRecent: 1 } },
      });
      closers.push(() => gatehouse.close());
      const emitted = tap(gatehouse);
      let sessionId: string | undefined;
      for (const prompt of prompts) {
        const result = await gatehouse.run({ prompt, ...(sessionId ? { sessionId } : {}) });
        assert.notEqual(result.outcome, "failed", result.error?.message);
        sessionId = result.sessionId;
      }
      await gatehouse.engine.drain();
      for (const e of emitted) fired.add(e.hook);
      assert.deepEqual(orderProblems(emitted), []);
    });
  }

  test("a call the person denies: permission_denied fires in the doc's order", async () => {
    const rec = recorder();
    const { gatehouse } = testGatehouse(TURN, {
      plugins: [rec.plugin, everything],
      subagents: true,
      approver: async () => "deny",
    });
    closers.push(() => gatehouse.close());
    const emitted = tap(gatehouse);
    let sessionId: string | undefined;
    for (const prompt of ["first", "please work"]) {
      const result = await gatehouse.run({ prompt, ...(sessionId ? { sessionId } : {}) });
      assert.notEqual(result.outcome, "failed", result.error?.message);
      sessionId = result.sessionId;
    }
    await gatehouse.engine.drain();
    for (const e of emitted) fired.add(e.hook);
    assert.ok(emitted.some((e) => e.hook === "permission_denied"));
    assert.deepEqual(orderProblems(emitted), []);
  });

  test("the check fails on an order the doc does not have", () => {
    const swapped = [
      { hook: "message_received", runId: "r" },
      { hook: "inbound_claim", runId: "r" },
      { hook: "before_input", runId: "r" },
    ] as const;
    assert.equal(orderProblems(swapped).length, 1);
  });

  test("every hook of the catalog fired in these runs", () => {
    assert.deepEqual(
      HOOK_NAMES.filter((h) => !fired.has(h)),
      [],
    );
  });
});
