// A small gate so that the log shows a blocked run too.
import type { PluginDefinition } from "gatehouse-runtime";

const plugin: PluginDefinition = {
  id: "block-secrets",
  setup(api) {
    api.on("before_agent_run", (event) =>
      /\bsecret\b/i.test(event.prompt)
        ? { outcome: "block", reason: "asked for a secret", message: "I can't share secrets.", category: "secrets" }
        : { outcome: "pass" },
    );
  },
};

export default plugin;
