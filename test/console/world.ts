import { z } from "zod";
import { definePlugin } from "../../src/plugins/index.js";
import type { Tool } from "../../src/tools/types.js";

/**
 * The console tests' world: a scripted model, a firewall that blocks prompts with a notice (and
 * a reason that must never appear anywhere), a tool guard, an approval ask, and replies that try
 * to run script in the page.
 */

export const NOTICE = "This request was blocked by the firewall.";
export const REASON = "internal: matched rule 17 of the secret list";
/** before_tool_call's blockReason is user-safe: the model sees it as the tool's error, and it is stored. */
export const TOOL_NOTICE = "Deleting files is not allowed here.";

/** A reply that tries every way text could become markup, a link or a reordered line. */
export const XSS_REPLY = [
  `<script>window.__pwned = "script"</script>`,
  `<img src=x onerror="window.__pwned='img'">`,
  `[click me](javascript:window.__pwned='md')`,
  `<a href="javascript:window.__pwned='a'">open</a>`,
  `invoice\u202Efdp.exe`,
].join("\n");

export const XSS_TITLE = `<img src=x onerror="window.__pwned='title'"> Refund \u202Eexe.txt`;

export const SCRIPT = {
  runs: [
    { match: "^xss", turns: [{ text: XSS_REPLY }] },
    {
      match: "^tool",
      turns: [{ text: "Using it.", toolCalls: [{ name: "Echo", input: { text: "t" } }] }, { text: "Done." }],
    },
    {
      match: "^delete",
      turns: [{ toolCalls: [{ name: "Echo", input: { text: "rm -rf /" } }] }, { text: "It was not allowed." }],
    },
    { match: "^ask", turns: [{ toolCalls: [{ name: "Echo", input: { text: "asked" } }] }, { text: "After the ask." }] },
    { match: "^verify", turns: [{ text: "A draft answer." }, { text: "A checked answer." }] },
    { match: ".", turns: [{ text: "Plain answer." }] },
  ],
};

export const firewall = definePlugin({
  id: "firewall",
  setup(api) {
    api.on("before_agent_run", (e) =>
      e.prompt.includes("forbidden")
        ? { outcome: "block", reason: REASON, message: NOTICE, category: "secrets" }
        : undefined,
    );
  },
});

export const toolGuard = definePlugin({
  id: "tool-guard",
  setup(api) {
    api.on("before_tool_call", (e) =>
      String((e.params as { text?: string }).text).startsWith("rm")
        ? { block: true, blockReason: TOOL_NOTICE }
        : undefined,
    );
  },
});

/** Asks for approval before every Echo call whose text is "asked". */
export const asker = definePlugin({
  id: "asker",
  setup(api) {
    api.on("before_tool_call", (e) =>
      (e.params as { text?: string }).text === "asked"
        ? { requireApproval: { title: "Echo something? <b>bold</b> \u202Etxt.exe" } }
        : undefined,
    );
  },
});

/** Asks for one more pass when the answer is a draft. */
export const verifier = definePlugin({
  id: "verifier",
  setup(api) {
    api.on("before_agent_finalize", (e) =>
      e.lastAssistantMessage.includes("draft")
        ? { action: "revise", retry: { instruction: "Check it again.", maxAttempts: 1 } }
        : undefined,
    );
  },
});

/** Stand-ins for the built-in tools an approval shows (their names are what the rules and suggestions read). */
export const bash: Tool<{ command: string }, string> = {
  name: "Bash",
  description: "Runs a command",
  inputSchema: z.object({ command: z.string() }),
  execute: async () => "ran",
};
export const write: Tool<{ file_path: string; content: string }, string> = {
  name: "Write",
  description: "Writes a file",
  inputSchema: z.object({ file_path: z.string(), content: z.string() }),
  execute: async () => "written",
};
