// Withholds a tool's output when it contains credentials. after_tool_call runs before the result
// reaches the model, the store, the terminal or any later hook: a withheld output is replaced by
// a notice everywhere, so the secret is never persisted. A failed call's output counts too: a
// command that prints a secret and then exits non-zero hands it over as `error`, not `result`.
import type { PluginDefinition } from "gatehouse-runtime";

/** Shapes of common credentials: AWS access keys and secrets, private keys, password assignments. */
const CREDENTIALS = [
  /\bAKIA[0-9A-Z]{16}\b/,
  /aws_secret_access_key\s*[=:]/i,
  /-----BEGIN [A-Z ]*PRIVATE KEY-----/,
  /\bpassword\s*[=:]\s*\S+/i,
];

const plugin: PluginDefinition = {
  id: "withhold-secrets",
  setup(api) {
    api.on(
      "after_tool_call",
      (event) => {
        const output =
          event.error ?? (typeof event.result === "string" ? event.result : JSON.stringify(event.result ?? ""));
        if (!CREDENTIALS.some((pattern) => pattern.test(output))) return undefined;
        // blockReason is what the model (and the user, through it) is told instead of the output.
        return { block: true, blockReason: "The output contained credentials and was withheld" };
      },
      { matcher: "Bash|Read|Grep" },
    );
  },
};

export default plugin;
