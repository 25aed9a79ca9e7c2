import type { RunError, RunEvent, RunResult } from "../runtime/types.js";
import { EXIT, type ExitCode } from "./exit.js";

/** Where each provider's key is read (src/models/providers.ts), for the hint after a 401. */
const KEY_VARIABLES: Readonly<Record<string, string>> = {
  openai: "OPENAI_API_KEY",
  anthropic: "ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN)",
  "openai-compatible": "OPENAI_COMPATIBLE_API_KEY",
};

/**
 * The one line `run` and `chat` print when a run did not complete (without `gatehouse: `),
 * with a hint where one helps; undefined when there is nothing to say.
 */
export function runEndLine(result: Pick<RunResult, "outcome" | "error" | "steps">): string | undefined {
  switch (result.outcome) {
    case "cancelled":
      return "run cancelled";
    case "max_steps":
      return `stopped after ${result.steps} model ${result.steps === 1 ? "call" : "calls"}: the step limit was reached while the model was still working (raise it with --max-turns or "maxSteps" in gatehouse.json)`;
    case "failed":
      return result.error ? failureLine(result.error) : "run failed: unknown error";
    default:
      return undefined;
  }
}

/** A failed run's line: what happened, the provider's own message, then the hint. */
export function failureLine(error: RunError): string {
  if (error.kind === "missing_key") return error.message;
  const retries = (error.attempts ?? 1) - 1;
  const facts = [
    ...(error.status === undefined ? [] : [`HTTP ${error.status}`]),
    ...(retries > 0 ? [`retried ${retries} ${retries === 1 ? "time" : "times"}`] : []),
  ];
  const what = `run failed: ${error.provider}${facts.length ? ` (${facts.join(", ")})` : ""}: ${error.message}`;
  const hint = hintFor(error);
  return hint ? `${what} — ${hint}` : what;
}

function hintFor(error: RunError): string | undefined {
  switch (error.kind) {
    case "auth": {
      const variable = KEY_VARIABLES[error.provider];
      return variable ? `check ${variable}` : "check the provider's credentials";
    }
    case "not_found":
      return error.model === undefined ? "check the model name" : `check the model name "${error.model}"`;
    case "rate_limit":
      return "the provider's rate limit held; wait and try again, or raise model.maxRetries in gatehouse.json";
    case "connection":
      return "check the provider's base URL and the network";
    case "server":
      return "the provider kept failing; try again later, or raise model.maxRetries in gatehouse.json";
    case "invalid_response":
      return "the server at the base URL may not speak this provider's protocol";
    default:
      return undefined;
  }
}

/** The status line's note while a failed model call waits: `retrying (2/3) after 500`. */
export function retryText(event: Extract<RunEvent, { type: "retry" }>): string {
  const cause = event.status === undefined ? event.kind.replace(/_/g, " ") : String(event.status);
  return `retrying (${event.attempt}/${event.maxAttempts}) after ${cause}`;
}

/** The exit status for a run's outcome: a missing key is a configuration error (2). */
export function runExitCode(result: Pick<RunResult, "outcome" | "error">): ExitCode {
  switch (result.outcome) {
    case "completed":
    case "claimed":
      return EXIT.ok;
    case "blocked":
      return EXIT.blocked;
    case "failed":
      return result.error?.kind === "missing_key" ? EXIT.usage : EXIT.failed;
    case "cancelled":
    case "max_steps":
      return EXIT.failed;
  }
}
