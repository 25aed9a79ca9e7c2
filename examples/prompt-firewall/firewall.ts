// A prompt firewall on before_agent_run: the gate sees the prompt exactly as the model would
// receive it and can stop the turn before any model call. A blocked prompt is never stored: the
// session keeps only the user-facing message. The gate fails closed: if this handler threw or
// timed out, the turn would be blocked too.
import type { PluginDefinition } from "gatehouse-runtime";

/** Each rule: a pattern, a category for the audit trail, and the message the user sees. */
const RULES = [
  {
    pattern:
      /\b(ignore|disregard|forget)\b.{0,40}\b(previous|prior|above|earlier)\b.{0,20}\b(instructions|rules|prompt)/i,
    category: "prompt-injection",
    message: "This request tries to override the assistant's instructions, so it was not sent.",
  },
  {
    pattern: /\b(reveal|print|show|repeat)\b.{0,30}\bsystem prompt\b/i,
    category: "prompt-extraction",
    message: "The assistant's instructions are not shared.",
  },
] as const;

const plugin: PluginDefinition = {
  id: "prompt-firewall",
  setup(api) {
    api.on("before_agent_run", (event) => {
      // modelPrompt includes context other plugins injected: check what the model would see.
      const rule = RULES.find((r) => r.pattern.test(event.modelPrompt));
      if (!rule) return { outcome: "pass" };
      return {
        outcome: "block",
        // Internal: never shown, logged or stored.
        reason: `matched ${rule.pattern.source}`,
        // Shown to the user, and stored in place of the prompt.
        message: rule.message,
        // Recorded in the audit trail (gatehouse audit).
        category: rule.category,
      };
    });
  },
};

export default plugin;
