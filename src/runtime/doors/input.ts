import type { GateOutcome } from "../../hooks/types.js";
import type { RuntimeDeps } from "../deps.js";
import { notices } from "../notices.js";
import type { RunState } from "../state.js";
import { applyBlock } from "./block.js";
import { type Draft, draftMessage, storeAttachments, writeMessage } from "./persist.js";

/**
 * The input door (docs/lifecycle.md, step 2). Every input a run starts with — a prompt, a slash
 * command with its arguments — meets `before_input` first (Claude Code's `UserPromptSubmit`
 * maps there), before slash commands and claims act on it. A blocked input is stored only as its
 * notice. `before_agent_run` (step 7) is the second gate, on model turns only, once the model
 * prompt is known. The user's words are stored here, once their gates passed.
 */
export async function admitInput(
  deps: RuntimeDeps,
  state: RunState,
  command: { readonly name: string; readonly args: string } | undefined,
): Promise<boolean> {
  if (!deps.engine.hasHooks("before_input")) return true;
  const gate = await deps.engine.emit("before_input", { prompt: state.prompt, ...(command ? { command } : {}) });
  return passed(deps, state, gate);
}

/**
 * Step 9, `before_agent_run`: the last word before the model, seeing the caller's earlier turns
 * (`RunInput.priorMessages`) in `messages`. A pass stores those turns and the user's own words
 * (never the injected context) and consumes the queued injections; a block stores none of them
 * and leaves the injections queued for the next run.
 */
export async function admitPrompt(deps: RuntimeDeps, state: RunState): Promise<boolean> {
  const priors = state.priorMessages.map(
    (m): Draft => ({ role: m.role, parts: [{ type: "text", text: m.text }], metadata: { prior: true } }),
  );
  const gate = await deps.engine.emit("before_agent_run", {
    prompt: state.prompt,
    modelPrompt: state.modelPromptText(),
    messages: priors.length ? [...state.history, ...priors.map((d) => draftMessage(state, d))] : state.history,
    systemPrompt: state.systemPrompt(),
  });
  if (!(await passed(deps, state, gate))) return false;
  // The caller's earlier turns, now that the gate has seen them: stored with this run, before its prompt.
  for (const prior of priors) await writeMessage(deps, state, prior);
  await storePrompt(deps, state);
  await storeAttachments(deps, state);
  if (state.injections.length)
    await deps.store.commitInjections(
      state.runId,
      state.injections.map((i) => i.id),
    );
  return true;
}

/** The user's words, stored once the gates before them passed (a claimed turn's too). */
export async function storePrompt(deps: RuntimeDeps, state: RunState): Promise<void> {
  await writeMessage(deps, state, { role: "user", parts: [{ type: "text", text: state.prompt }] });
}

async function passed(deps: RuntimeDeps, state: RunState, gate: GateOutcome): Promise<boolean> {
  // A run cancelled while its gate was deciding is cancelled, not blocked.
  state.signal.throwIfAborted();
  if (gate.outcome === "pass") return true;
  const { by } = gate;
  await applyBlock(deps, state, {
    kind: "prompt",
    by,
    notice: gate.message ?? notices.promptBlocked(by.pluginId),
    ...(gate.category === undefined ? {} : { category: gate.category }),
  });
  return false;
}
