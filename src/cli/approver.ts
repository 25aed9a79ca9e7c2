import { createInterface } from "node:readline";
import type { ApprovalAnswer, ApprovalDecision, ApprovalRequest, Approver } from "../runtime/types.js";
import { toolInputFields } from "../tools/input-view.js";
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

/** How much of one field of a tool's input is shown above the question: characters, then lines. */
const MAX_FIELD_CHARS = 2000;
const MAX_FIELD_LINES = 30;

/**
 * The terminal's approver (`run` on a terminal, `chat`): it shows the rule an "always" answer
 * would add, asks `Allow <tool>? <title> [y]es / [a]lways (this session) / [p]roject (save to
 * .claude/settings.local.json) / [n]o, then Enter:` on stderr and reads the answer from stdin
 * (a line: the terminal stays in cooked mode); anything
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

/** Nobody could answer: the audit record says so, and the model reads that no one could be asked. */
const NO_TERMINAL = { decision: "nobody", decidedBy: "no-terminal" } as const;

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
      ? "[y]es once / [a]lways (this session) / [p]roject (save to .claude/settings.local.json) / [n]o, then Enter"
      : "[y]es once / [n]o, then Enter";
  // A hook's default title is already the question: not "Allow Bash? Allow Bash?".
  const question = `Allow ${tool}? ${title === `Allow ${tool}?` ? "" : `${title} `}${choices}: `;
  const always = rules.length > 0 ? `"always" adds: ${rules.join(", ")}` : undefined;
  const lines = (text: string | undefined) => (text === undefined || terminalLine(text) === "" ? [] : [text]);
  const details = [...lines(request.description), ...inputLines(request.params), ...lines(always)]
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

/**
 * The tool's input as the person reads it (as the console shows it): a field a line, a string as
 * written (a Write's content with its line breaks, under its name), secrets masked; each line is
 * sanitized on its way to the screen.
 */
function inputLines(params: unknown): string[] {
  return toolInputFields(params, MAX_FIELD_CHARS).flatMap(({ name, text }) => {
    // A final line break ends the last line; it does not start another.
    const lines = text.replace(/\r?\n$/, "").split(/\r?\n/);
    if (lines.length === 1) return [`${name}: ${text}`];
    const shown = lines.slice(0, MAX_FIELD_LINES).map((line) => `  ${line}`);
    const left = lines.length - shown.length;
    return [`${name}:`, ...shown, ...(left > 0 ? [`  … (${left} more lines)`] : [])];
  });
}
