// How `run` and `chat` stop on a signal. Light on purpose (chat.ts imports it at start-up).
import { killTrackedGroups } from "../core/process-groups.js";

/** The signals that stop a turn: Ctrl-C, a supervisor's SIGTERM, a closed terminal's SIGHUP. */
export type StopSignal = "SIGINT" | "SIGTERM" | "SIGHUP";
const STOP_SIGNALS: readonly StopSignal[] = ["SIGINT", "SIGTERM", "SIGHUP"];

/** The shell's convention, 128 + the signal's number: 130 (SIGINT), 143 (SIGTERM), 129 (SIGHUP). */
export function exitCodeFor(signal: StopSignal): 130 | 143 | 129 {
  return signal === "SIGINT" ? 130 : signal === "SIGTERM" ? 143 : 129;
}

/** Listens for `signals` until the returned function is called. */
export function onSignals(signals: readonly StopSignal[], listener: (signal: StopSignal) => void): () => void {
  const handlers = signals.map((signal) => [signal, () => listener(signal)] as const);
  for (const [signal, handler] of handlers) process.on(signal, handler);
  return () => {
    for (const [signal, handler] of handlers) process.off(signal, handler);
  };
}

export function onStopSignals(listener: (signal: StopSignal) => void): () => void {
  return onSignals(STOP_SIGNALS, listener);
}

/**
 * Stops at once (the second signal): every process group Gatehouse started — Bash tool calls,
 * command hooks, MCP servers — is SIGKILLed first, so nothing that ignores SIGTERM outlives it.
 * Ctrl-C exits 130; SIGTERM and SIGHUP end the process by the signal itself.
 */
export function stopNow(signal: StopSignal): void {
  killTrackedGroups("SIGKILL");
  if (signal === "SIGINT") process.exit(exitCodeFor(signal));
  raise(signal);
}

/**
 * Leaves after a SIGTERM or SIGHUP whose turn was cancelled and recorded: output flushed (unless
 * the terminal is gone), every process group still tracked SIGKILLed, then the process ends by
 * the same signal, as a program that catches one should, so its parent sees how it ended (a
 * shell shows 143 or 129). Exiting normally is no option after SIGHUP: Node restores the
 * terminal's mode as it exits, and on a terminal that is gone that aborts the process.
 */
export async function leaveBy(signal: Exclude<StopSignal, "SIGINT">): Promise<void> {
  if (signal === "SIGTERM") {
    const flushed = (stream: NodeJS.WriteStream) => new Promise<void>((resolve) => stream.write("", () => resolve()));
    await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
  }
  killTrackedGroups("SIGKILL");
  raise(signal);
}

function raise(signal: Exclude<StopSignal, "SIGINT">): void {
  // With no listener left, Node restores the default action: the signal ends the process.
  process.removeAllListeners(signal);
  process.kill(process.pid, signal);
}

/**
 * After SIGHUP the terminal is gone and writing to it fails (EIO): the run is still cancelled,
 * recorded and its processes stopped, so those errors must not end the process first.
 */
export function ignoreClosedTerminal(): void {
  for (const stream of [process.stdout, process.stderr, process.stdin]) stream.on("error", () => {});
}
