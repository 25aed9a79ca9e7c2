// What both agent-hook test files build on: a gatehouse.json with `agent` handlers on PreToolUse for Bash.

const ALLOW_BASH = { allow: ["Bash"] };
const CHECK = "Check the project policy before this call: $ARGUMENTS";
export const agentHook = (extra: object = {}) => ({ type: "agent", prompt: CHECK, ...extra });
/** gatehouse.json with these handlers on PreToolUse for Bash. */
export const settings = (...hooks: object[]) => ({
  model: "scripted:s.json",
  hooks: { PreToolUse: [{ matcher: "Bash", hooks }] },
  permissions: ALLOW_BASH,
});
