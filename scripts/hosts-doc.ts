/**
 * Renders docs/hosts/<agent>.md, one page per agent `gatehouse hook` answers, from the mapping
 * data: the agent's events and the catalog hook each fires (src/host-hooks/hosts.ts, over the
 * dialect tables), and which verdicts take effect there and how (src/host-hooks/effects.ts).
 * `npm run docs` writes them; test/host-hooks/docs.test.ts fails when a checked-in page differs.
 */
import { EFFECTS } from "../src/host-hooks/effects.js";
import { AGENTS, type Agent, catalogHookOf, hostEvents } from "../src/host-hooks/hosts.js";
import { CONFIG_FILE } from "../src/host-hooks/install.js";

const NAMES: Readonly<Record<Agent, string>> = {
  claude: "Claude Code",
  codex: "Codex",
  gemini: "Gemini CLI",
  cursor: "Cursor",
};

export const HOST_PAGES: Readonly<Record<Agent, string>> = {
  claude: "claude-code.md",
  codex: "codex.md",
  gemini: "gemini-cli.md",
  cursor: "cursor.md",
};

/** What each page says about its agent beyond the tables. */
const NOTES: Readonly<Record<Agent, string>> = {
  claude: `Claude Code runs the hook with the project folder in \`CLAUDE_PROJECT_DIR\`. A PostToolUse
answer replaces the output the model reads (\`updatedToolOutput\`); Claude Code's documentation
says this changes only what Claude sees, so its own transcript (\`~/.claude/projects/\`) and
telemetry may keep the tool's original output: Gatehouse's "never persists" holds for what the
model reads, not for Claude Code's own files.`,
  codex: `Codex reads hook answers strictly (an unknown field makes the hook fail, and a failed hook
lets the call run), so Gatehouse answers only with the fields Codex accepts. Codex runs both Write
and Edit as \`apply_patch\`, whose input is the patch text: plugins see the tool as \`apply_patch\`
with \`{ command }\`, and cannot rewrite it.`,
  gemini: `Gemini CLI's tool names and parameters are translated to Gatehouse's (\`run_shell_command\` →
\`Bash\`, \`dir_path\` → \`path\`, …) before plugins see them, and back in \`tool_input\`.`,
  cursor: `Cursor runs \`.cursor/hooks.json\` only in trusted workspaces; the project is the first of
\`workspace_roots\`. Its after-hooks cannot change what the model reads, and its \`stop\` event
carries no answer text.`,
};

const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n/g, " ");
const MARK: Readonly<Record<string, string>> = { yes: "yes", partly: "partly", no: "**no**" };

export function renderHostPage(agent: Agent): string {
  const name = NAMES[agent];
  // Claude Code's own names need no column of their own.
  const own = agent === "claude";
  const events = hostEvents(agent).map((e) => {
    const claude = own ? "" : ` ${e.events.map((x) => `\`${x}\``).join(", ")} |`;
    return `| \`${e.native}\` |${claude} ${[...new Set(e.events.map(catalogHookOf))].map((h) => `\`${h}\``).join(", ")} |`;
  });
  const eventsHeader = own
    ? "| Claude Code event | Gatehouse hook |\n|---|---|"
    : `| ${name} event | as Claude Code's | Gatehouse hook |\n|---|---|---|`;
  const effects = EFFECTS.map((row) => {
    const e = row.on[agent];
    return `| \`${cell(row.hook).replace(/, /g, "`, `")}\` | ${cell(row.verdict)} | ${MARK[e.takes]} | ${cell(e.how)} | ${e.proof ? `\`${e.proof}\`` : "—"} |`;
  });
  return `# Gatehouse in ${name}

<!-- Generated from src/host-hooks/ by \`npm run docs\` (scripts/hosts-doc.ts). Do not edit by hand. -->

\`gatehouse hook ${agent}\` makes Gatehouse a command hook of ${name}: ${name} runs it on each
event below, it runs the project's Gatehouse plugins (gatehouse.json \`plugins\`) and permission
rules on the catalog hook the event maps to, and answers in ${name}'s protocol. Internal reasons
(\`reason\`) never leave the process; the model or user reads a plugin's \`message\`.

\`\`\`
gatehouse hook install ${agent}          # shows the diff of ${CONFIG_FILE[agent]}, asks, writes
gatehouse hook install ${agent} --yes    # writes without asking (without a terminal: required)
\`\`\`

\`install\` adds one entry per event running \`gatehouse hook ${agent}\` (\`--command\` to run
another path) and prints which verdicts take effect on ${name}, as in the table below. A project
whose plugins wait for trust (\`gatehouse trust\`), whose plugins cannot be loaded, or whose
permission settings have errors, refuses every call that can be refused (fail closed), and so
does a plugin that throws on a hook that fails closed.

## Events

${eventsHeader}
${events.join("\n")}

## What takes effect

| Gatehouse hook | Verdict | Takes effect | How | Proved by |
|---|---|---|---|---|
${effects.join("\n")}

\`answer.test.ts\` proves a row by reading the answer back with Gatehouse's own reader of
${name}'s hook protocol (src/command-hooks/); \`real-claude.test.ts\` runs the real Claude Code.

${NOTES[agent]}

## Cost per call

The first call starts a background process for the project that keeps the plugins loaded
(socket \`.gatehouse/hook.sock\`, private to the user; ends after \`GATEHOUSE_HOOK_IDLE_SECONDS\`,
default 600, without a call). A call then costs a Node start and a socket round trip instead of
loading the project. When a watched file changes (gatehouse.json, the settings files, a plugin
file, the trust store) the process hands the call back, the hook answers it itself with the new
files, and the next call starts a fresh process. \`--no-daemon\` always answers in-process.
\`npm run bench -- host-hooks\` measures both paths against a bare \`sh -c true\` hook.
`;
}

export { AGENTS };
