import type { PluginLogger } from "../plugins/define.js";
import type { HandlerRun } from "./dispatch.js";
import type { CommandHookEvent } from "./events.js";
import type { HandlerOutcome } from "./executor.js";
import type { HookError } from "./verdict.js";

/**
 * The lines a run's command hooks add to the log (warn level, which the CLI prints on
 * stderr). Two kinds, kept apart on purpose:
 * - the hook's own words meant for the user — `systemMessage`, and stderr feedback where the
 *   dialect gives it to the user — shown as the hook wrote them (trimmed, never echoing its
 *   command line);
 * - operator facts about a handler that gave no usable answer, or whose output went over the
 *   cap: event, source, JSON path and how it ended, never its stdout or stderr (they can carry
 *   conversation content) nor its command line.
 */
export function reportRuns(log: PluginLogger, event: CommandHookEvent, runs: readonly HandlerRun[]): void {
  for (const { handler, outcome } of runs) {
    const where = `${event} hook (${handler.source}, ${handler.path})`;
    const failure = failureText(outcome, handler.timeoutMs);
    if (failure !== undefined) log.warn(`${where} ${failure}`);
    if (outcome.truncated) log.warn(`${where} wrote more than the output cap; ${outcome.droppedBytes} bytes dropped`);
    const { systemMessage, feedback } = outcome.verdict;
    for (const text of [systemMessage, feedback])
      if (text !== undefined) log.warn(`${event} hook (${handler.source}): ${text}`);
  }
}

function failureText(o: HandlerOutcome, timeoutMs: number): string | undefined {
  const { error, decision } = o.verdict;
  if (error === undefined || error === "aborted") return undefined;
  const effect = decision === undefined ? "no decision" : "blocked (onFailure: block)";
  return `${endedHow(o, error, timeoutMs)}: ${effect}`;
}

function endedHow(o: HandlerOutcome, error: HookError, timeoutMs: number): string {
  switch (error) {
    case "timeout":
      return `timed out after ${timeoutMs / 1000} s`;
    case "spawn": {
      // Only the error code: a spawn message names the program, which is part of the command line.
      const code = /\b(E[A-Z0-9_]+)\b/.exec(o.spawnError ?? "")?.[1];
      return `could not start${code ? ` (${code})` : ""}`;
    }
    case "unparseable":
      return "printed output that is not a valid JSON answer";
    default:
      if (o.httpStatus !== undefined) return `answered HTTP status ${o.httpStatus}`;
      return o.exitCode === null ? `was killed by ${o.signal ?? "a signal"}` : `exited with code ${o.exitCode}`;
  }
}
