import { createInterface } from "node:readline";
import type { ApprovalAnswer, ApprovalDecision, ApprovalRequest, Approver } from "../runtime/types.js";
import type { OutStream } from "./output.js";
import { terminalLine } from "./terminal.js";

/** Where the terminal approver asks (stderr) and reads the answer (stdin). */
export interface TerminalApproverIO {
  readonly input: NodeJS.ReadableStream & { readonly isTTY?: boolean; readonly readableEnded?: boolean };
  readonly output: OutStream;
}

const ONCE: Record<string, ApprovalDecision> = { y: "allow-once", yes: "allow-once", n: "deny", no: "deny" };
/** Offered only when there is a rule to add: "always" is a rule, never the whole tool. */
const ALWAYS: Record<string, ApprovalDecision> = {
  a: "allow-always",
  always: "allow-always",
  p: "allow-always-local",
  project: "allow-always-local",
};

/** How much of a tool's input is shown above the question. */
const MAX_INPUT_CHARS = 500;

/**
 * The terminal's approver (`run` on a terminal, `chat`): it shows the rule an "always" answer
 * would add, asks `Allow <tool>? <title> [y]es / [a]lways (this session) / [p]roject (save to
 * .claude/settings.local.json) / [n]o:` on stderr and reads the answer from stdin; anything
 * else it asks again, end of input denies. Without a terminal it denies without asking: nobody
 * is there to answer. An aborted signal (the runtime's approval timeout, or the run cancelled)
 * denies and stops reading. Questions from parallel tool calls are asked one at a time.
 */
export function createTerminalApprover(io: TerminalApproverIO): Approver {
  let queue: Promise<unknown> = Promise.resolve();
  return (request, signal) => {
    const next = queue.then((): Promise<ApprovalAnswer> | ApprovalAnswer =>
      interactive(io) ? ask(io, request, signal) : NO_TERMINAL,
    );
    queue = next.catch(() => {});
    return next;
  };
}

/** Nobody could answer: the audit record says so. */
const NO_TERMINAL = { decision: "deny", decidedBy: "no-terminal" } as const;

/** stdin already read to its end (the prompt came from it) cannot answer either. */
export function interactive(io: TerminalApproverIO): boolean {
  return io.input.isTTY === true && io.output.isTTY === true && io.input.readableEnded !== true;
}

function ask(io: TerminalApproverIO, request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalDecision> {
  if (signal.aborted) return Promise.resolve("deny");
  const tool = terminalLine(request.toolName);
  const title = terminalLine(request.title);
  const rules = (request.suggestions ?? []).map(terminalLine);
  const ANSWERS = rules.length > 0 ? { ...ONCE, ...ALWAYS } : ONCE;
  const choices =
    rules.length > 0
      ? "[y]es once / [a]lways (this session) / [p]roject (save to .claude/settings.local.json) / [n]o"
      : "[y]es once / [n]o";
  // A hook's default title is already the question: not "Allow Bash? Allow Bash?".
  const question = `Allow ${tool}? ${title === `Allow ${tool}?` ? "" : `${title} `}${choices}: `;
  const always = rules.length > 0 ? `"always" adds: ${rules.join(", ")}` : undefined;
  const details = [request.description, inputSummary(request.params), always]
    .filter((line): line is string => line !== undefined && terminalLine(line) !== "")
    .map((line) => `  ${terminalLine(line)}\n`)
    .join("");

  return new Promise((resolve) => {
    // terminal: false leaves the TTY in cooked mode: the terminal echoes and edits the line,
    // and Ctrl-C still reaches the process as SIGINT (which cancels the run).
    const rl = createInterface({ input: io.input, terminal: false });
    let settled = false;
    const finish = (decision: ApprovalDecision, note?: string) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener("abort", onAbort);
      rl.close();
      if (note !== undefined) io.output.write(note);
      resolve(decision);
    };
    const onAbort = () => finish("deny", "\n(no answer: denied)\n");
    rl.on("line", (line) => {
      const decision = ANSWERS[line.trim().toLowerCase()];
      if (decision !== undefined) finish(decision);
      else io.output.write(question);
    });
    rl.on("close", () => finish("deny", "\n"));
    signal.addEventListener("abort", onAbort, { once: true });
    io.output.write(`${details}${question}`);
  });
}

function inputSummary(params: unknown): string | undefined {
  if (params === undefined) return undefined;
  let text: string;
  try {
    text = JSON.stringify(params) ?? "";
  } catch {
    return undefined;
  }
  return text.length > MAX_INPUT_CHARS ? `${text.slice(0, MAX_INPUT_CHARS)}…` : text;
}
