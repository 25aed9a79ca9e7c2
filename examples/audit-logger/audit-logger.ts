// An audit logger: one JSON line per delivered reply (message_sent) and per run (agent_end), with
// identifiers, outcomes, sizes and times — no content, so the log holds nothing a policy blocked
// or rewrote. Both hooks are observers: they run after the decisions, cannot change them, and
// a logger that fails never fails the run.
import { appendFileSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import type { PluginDefinition } from "gatehouse-runtime";

interface Config {
  /** The log file, relative to the folder gatehouse runs in. */
  file?: string;
}

const plugin: PluginDefinition<Config | undefined> = {
  id: "audit-logger",
  setup(api) {
    const file = api.config?.file ?? ".gatehouse/audit-log.jsonl";
    const write = (record: Record<string, unknown>) => {
      mkdirSync(dirname(file), { recursive: true });
      appendFileSync(file, `${JSON.stringify({ at: new Date().toISOString(), ...record })}\n`);
    };

    api.on("message_sent", (event, ctx) => {
      write({
        event: "message_sent",
        sessionId: ctx.sessionId,
        runId: ctx.runId,
        to: event.to,
        success: event.success,
        chars: event.content.length,
      });
    });

    // agent_end fires once for every run that passed admission, whatever its outcome
    // (completed, blocked, claimed, failed, cancelled); its messages are as stored, after any scrub.
    api.on("agent_end", (event, ctx) => {
      write({
        event: "agent_end",
        sessionId: ctx.sessionId,
        runId: event.runId,
        depth: ctx.depth,
        trigger: ctx.trigger,
        outcome: event.outcome,
        success: event.success,
        durationMs: Math.round(event.durationMs),
        messages: event.messages.length,
      });
    });
  },
};

export default plugin;
