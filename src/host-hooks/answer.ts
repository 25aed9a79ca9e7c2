import { translateParams } from "../command-hooks/dialects.js";
import type { HostVerdict } from "./evaluate.js";
import type { Agent } from "./hosts.js";
import type { HookRequest } from "./request.js";

/** What the hook process says back: its exit code, stdout and stderr. */
export interface HookAnswer {
  readonly exitCode: number;
  readonly stdout: string;
  /** Only Gatehouse's own notes (what the agent cannot do); never a plugin's words or reason. */
  readonly stderr: string;
}

type Obj = Record<string, unknown>;
const isRecord = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * A verdict in the agent's protocol. Each agent gets the answer its own hook runner reads (the
 * same fields src/command-hooks/ reads from that agent's hooks, so the two directions agree);
 * where the agent has no way to carry out a verdict, the strongest thing it can do is sent
 * (stopping the turn) and stderr says what did not happen.
 */
export function answer(request: HookRequest, verdict: HostVerdict): HookAnswer {
  const out = WRITERS[request.agent](request, verdict);
  const json = Object.keys(out.json).length === 0 ? "" : `${JSON.stringify(out.json)}\n`;
  const notes = out.notes.map((n) => `gatehouse: ${request.agent}: ${n}\n`).join("");
  return { exitCode: 0, stdout: json, stderr: notes };
}

type Written = { json: Obj; notes: string[] };
type Writer = (request: HookRequest, verdict: HostVerdict) => Written;

const stopped = (v: HostVerdict, fallback?: string): Obj =>
  v.stop || fallback !== undefined
    ? { continue: false, ...((v.stop?.message ?? fallback) ? { stopReason: v.stop?.message ?? fallback } : {}) }
    : {};

/** A replacement output as Claude Code validates it: in the shape of the output it replaces, or undefined. */
export function claudeShaped(original: unknown, replacement: unknown, mcp: boolean): unknown {
  if (mcp || typeof original === "string") return replacement;
  if (isRecord(replacement)) return replacement;
  if (typeof replacement !== "string" || !isRecord(original)) return undefined;
  // Bash: { stdout, stderr, interrupted, isImage }; Read: { type: "text", file: { content, … } }.
  if (typeof original.stdout === "string") return { ...original, stdout: replacement, stderr: "" };
  if (isRecord(original.file) && typeof original.file.content === "string")
    return { ...original, file: { ...original.file, content: replacement } };
  return undefined;
}

const text = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v));

function claudeOrCodex(agent: "claude" | "codex"): Writer {
  return (request, v) => {
    const notes: string[] = [];
    const hookEventName = request.event;
    switch (request.hook) {
      case "before_tool_call": {
        const hso: Obj = { hookEventName };
        if (v.block) {
          hso.permissionDecision = "deny";
          hso.permissionDecisionReason = v.block.message;
        } else if (v.ask !== undefined && agent === "claude") {
          hso.permissionDecision = "ask";
          hso.permissionDecisionReason = v.ask;
        } else if (v.ask !== undefined) {
          // Codex refuses "ask" from a hook: a call that needs a person does not run.
          hso.permissionDecision = "deny";
          hso.permissionDecisionReason = `${v.ask} (Codex hooks cannot ask for approval, so the call was refused)`;
          notes.push("cannot ask for approval: the call was refused");
        } else if (v.params !== undefined || v.allow) {
          if (agent === "codex" && v.params !== undefined && request.toolName === "apply_patch")
            notes.push("cannot rewrite an apply_patch input");
          else if (v.params !== undefined) hso.updatedInput = v.params;
          // Codex takes updatedInput only with allow (so a rewrite also skips its approval), and allow only with updatedInput.
          if (agent === "codex") {
            hso.permissionDecision = "allow";
            hso.updatedInput ??= request.params;
          } else if (v.allow) hso.permissionDecision = "allow";
        }
        // Codex refuses continue/stopReason on PreToolUse.
        const stop = agent === "claude" ? stopped(v) : {};
        if (agent === "codex" && v.stop) notes.push("cannot stop the turn from PreToolUse");
        return { json: Object.keys(hso).length > 1 ? { ...stop, hookSpecificOutput: hso } : stop, notes };
      }
      case "after_tool_call": {
        const hso: Obj = { hookEventName };
        if (v.additionalContext) hso.additionalContext = v.additionalContext;
        const replacement = v.block ? v.block.message : v.result;
        let json: Obj = {};
        if (replacement !== undefined) {
          const mcp = request.toolName.startsWith("mcp__");
          const shaped =
            agent === "claude" && request.event === "PostToolUse"
              ? claudeShaped(request.result, replacement, mcp)
              : undefined;
          if (shaped !== undefined) hso.updatedToolOutput = shaped;
          else {
            // Nothing the agent would show in the output's place: the turn stops before the model reads it.
            const what = v.block ? "withhold" : "rewrite";
            notes.push(
              `cannot ${what} this ${request.toolName} ${request.error === undefined ? "output" : "failure"}: the turn was stopped instead`,
            );
            json = {
              ...stopped(
                v,
                v.block?.message ??
                  "Gatehouse stopped the turn: a policy changed a tool output the agent cannot replace.",
              ),
            };
            if (v.block) json = { ...json, decision: "block", reason: v.block.message };
          }
        }
        json = { ...stopped(v), ...json };
        return { json: Object.keys(hso).length > 1 ? { ...json, hookSpecificOutput: hso } : json, notes };
      }
      case "before_input":
        return { json: v.block ? { decision: "block", reason: v.block.message } : {}, notes };
      case "before_agent_finalize":
        return { json: v.revise ? { decision: "block", reason: v.revise } : {}, notes };
    }
  };
}

const gemini: Writer = (request, v) => {
  const notes: string[] = [];
  const json: Obj = { ...stopped(v) };
  const hso: Obj = {};
  if (v.additionalContext) hso.additionalContext = v.additionalContext;
  switch (request.hook) {
    case "before_tool_call":
      if (v.block) Object.assign(json, { decision: "deny", reason: v.block.message });
      else if (v.ask !== undefined) Object.assign(json, { decision: "ask", reason: v.ask });
      else if (v.allow) json.decision = "allow";
      // Gemini CLI merges tool_input over the model's arguments: a rewrite can change keys, not remove them.
      if (!v.block && v.params !== undefined)
        hso.tool_input = translateParams("gemini", request.toolName, v.params, "native");
      break;
    case "after_tool_call": {
      // AfterTool's deny puts the reason in the result's place: the withheld notice, or the rewritten output.
      const replacement = v.block ? v.block.message : v.result;
      if (replacement !== undefined) Object.assign(json, { decision: "deny", reason: text(replacement) });
      break;
    }
    case "before_input":
      if (v.block) Object.assign(json, { decision: "deny", reason: v.block.message });
      break;
    case "before_agent_finalize":
      if (v.revise) Object.assign(json, { decision: "deny", reason: v.revise });
      break;
  }
  if (Object.keys(hso).length > 0) json.hookSpecificOutput = hso;
  return { json, notes };
};

const cursor: Writer = (request, v) => {
  const notes: string[] = [];
  const json: Obj = {};
  if (v.additionalContext) json.additional_context = v.additionalContext;
  switch (request.hook) {
    case "before_tool_call":
      if (v.block)
        Object.assign(json, { permission: "deny", user_message: v.block.message, agent_message: v.block.message });
      else if (v.ask !== undefined) Object.assign(json, { permission: "ask", user_message: v.ask });
      else if (v.allow) json.permission = "allow";
      if (!v.block && v.params !== undefined) json.updated_input = v.params;
      if (v.stop) notes.push("cannot stop the turn from a tool hook");
      break;
    case "after_tool_call":
      if (v.block || v.result !== undefined)
        notes.push(`cannot ${v.block ? "withhold" : "rewrite"} a tool output: Cursor shows the model the original`);
      if (v.stop) notes.push("cannot stop the turn from a tool hook");
      break;
    case "before_input":
      if (v.block) Object.assign(json, { continue: false, user_message: v.block.message });
      break;
    case "before_agent_finalize":
      if (v.revise) json.followup_message = v.revise;
      break;
  }
  return { json, notes };
};

const WRITERS: Readonly<Record<Agent, Writer>> = {
  claude: claudeOrCodex("claude"),
  codex: claudeOrCodex("codex"),
  gemini,
  cursor,
};
