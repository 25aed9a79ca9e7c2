import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { hookSpec } from "../../src/hooks/catalog.js";
import type { PluginDefinition } from "../../src/plugins/index.js";
import { dropTolerated, HOOK_MAPPINGS } from "../../src/plugins/openclaw/hooks.js";
import { testGatehouse } from "../runtime/helpers.js";

type Obj = Record<string, unknown>;
const openclaw = (id: string, register: (api: Obj) => void) => ({ id, register }) as unknown as PluginDefinition;

/** Results no OpenClaw hook defines: unknown keys, and known keys holding the wrong shape. */
const NONSENSE: readonly Obj[] = [
  { blocked: true },
  { payload: "[REDACTED]" },
  { payload: { text: 42 } },
  { payload: { text: "[REDACTED]", extra: 1 } },
  { reply: 42 },
  { reply: { text: 7 } },
  { message: "not a message" },
  { message: { content: 42 } },
  { handled: "yes" },
  { params: "rm -rf /" },
  { requireApproval: { title: "ok", unknownKey: true } },
  { cancel: "yes" },
];

/** The sample event each translator receives (only the fields they read). */
const SAMPLE_EVENT: Obj = {
  toolName: "Bash",
  message: { role: "assistant", parts: [{ type: "text", text: "hi" }] },
};

describe("OpenClaw result translators hand what they cannot read to validation", () => {
  for (const mapping of HOOK_MAPPINGS.filter((m) => !m.void && m.targets.length > 0)) {
    for (const target of mapping.targets) {
      const schema = hookSpec(target).result;
      if (!schema) continue;
      test(`${mapping.openclaw} → ${target}: a nonsense result is valid only where it is valid natively`, () => {
        for (const nonsense of NONSENSE.filter((n) => !schema.safeParse(n).success)) {
          const { result } = dropTolerated(mapping, nonsense);
          const translated = mapping.result ? mapping.result(result, target, SAMPLE_EVENT) : result;
          const parsed = schema.safeParse(translated);
          assert.equal(
            parsed.success,
            false,
            `${JSON.stringify(nonsense)} became the valid ${JSON.stringify(translated)}`,
          );
        }
      });
    }
  }
});

describe("reply_payload_sending on the fail-closed message_sending gate", { concurrency: 3 }, () => {
  const secretReply = { runs: [{ turns: [{ text: "the code is 4242-1717" }] }] };
  const withHandler = (handler: () => unknown) =>
    testGatehouse(secretReply, {
      plugins: [
        openclaw("sender", (api) => (api.on as (h: string, f: unknown) => void)("reply_payload_sending", handler)),
      ],
    });

  for (const nonsense of [{ blocked: true }, { payload: "[REDACTED]" }]) {
    test(`${JSON.stringify(nonsense)} is an invalid result: nothing of the reply is delivered or stored`, async () => {
      const { gatehouse, store } = withHandler(() => nonsense);
      const result = await gatehouse.run({ prompt: "code?" });
      assert.doesNotMatch(result.reply ?? "", /4242-1717/);
      assert.doesNotMatch(JSON.stringify(await store.history(result.sessionId)), /4242-1717/);
      await gatehouse.close();
    });
  }

  test("control: a redaction in OpenClaw's shape ({ payload: { text } }) is what is delivered and stored", async () => {
    const { gatehouse, store } = withHandler(() => ({ payload: { text: "the code is [REDACTED]" } }));
    const result = await gatehouse.run({ prompt: "code?" });
    assert.equal(result.reply, "the code is [REDACTED]");
    assert.doesNotMatch(JSON.stringify(await store.history(result.sessionId)), /4242-1717/);
    await gatehouse.close();
  });

  test("control: a handler that returns nothing lets the reply through", async () => {
    const { gatehouse } = withHandler(() => undefined);
    assert.equal((await gatehouse.run({ prompt: "code?" })).reply, "the code is 4242-1717");
    await gatehouse.close();
  });
});
