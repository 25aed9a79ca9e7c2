// A second, independent redactor for phone numbers. It composes with redact-emails: Gatehouse
// chains rewrites (each handler sees the previous handler's output), where first-writer-wins or
// last-writer-wins hosts would silently drop one of the two.
import type { PluginDefinition } from "gatehouse-runtime";

const PHONE = /\+?\d[\d ().-]{7,}\d/g;

const plugin: PluginDefinition = {
  id: "redact-phones",
  setup(api) {
    api.on("before_response_emit", (event) => ({
      allContent: event.allContent.map((t) => t.replace(PHONE, "[phone]")),
    }));
  },
};

export default plugin;
