// Redacts e-mail addresses from every assistant text of a run: the final answer and the texts the
// model wrote on its way there (before tool calls). before_response_emit sees them all in
// `allContent` and the store is rewritten to match, so no address is left in the session.
import type { PluginDefinition } from "gatehouse-runtime";

const EMAIL = /[\w.+-]+@[\w-]+(\.[\w-]+)+/g;

const plugin: PluginDefinition = {
  id: "redact-emails",
  setup(api) {
    // Priority 10: runs before redact-phones (priority 0). With the chain rule each redactor sees
    // the texts as the one before it left them, so both rewrites apply.
    api.on(
      "before_response_emit",
      (event) => ({ allContent: event.allContent.map((t) => t.replace(EMAIL, "[email]")) }),
      {
        priority: 10,
      },
    );
  },
};

export default plugin;
