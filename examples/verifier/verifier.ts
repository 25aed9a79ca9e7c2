// A verifier on before_agent_finalize: when the model gives a final answer, check it, and if it
// falls short ask for one more pass. `retry.maxAttempts` caps the retries for this check, so a
// model that never complies cannot loop: the run ends after at most maxAttempts + 1 model calls
// (and Gatehouse never allows more than 3 revisions a run, whatever maxAttempts says).
import type { PluginDefinition } from "gatehouse-runtime";

/** An answer must end with a source, like `[source: example.org]`. */
const CITED = /\[source: [^\]]+\]\s*$/;

const plugin: PluginDefinition = {
  id: "citation-verifier",
  setup(api) {
    api.on("before_agent_finalize", (event) => {
      if (CITED.test(event.lastAssistantMessage)) return { action: "finalize" };
      return {
        action: "revise",
        retry: {
          // Model-only: appended to the conversation for the next pass, never shown to the user.
          instruction: "End your answer with the source you used, as [source: <site>].",
          maxAttempts: 1,
          idempotencyKey: "citation",
        },
      };
    });
  },
};

export default plugin;
