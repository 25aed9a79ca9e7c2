// `gatehouse chat` (issue 7). main.ts imports this file at start-up, so its static imports stay
// light (node built-ins, picocolors, types); the runtime, store and config load in the action.
import { randomUUID } from "node:crypto";
import { createInterface } from "node:readline";
import { PassThrough } from "node:stream";
import type { Command } from "commander";
import pc from "picocolors";
import { maskSecrets } from "../core/secrets.js";
import type { RunStream } from "../runtime/gatehouse.js";
import type { ApprovalAnswer, ApprovalRequest, Approver, RunEvent, RunInput, RunResult } from "../runtime/types.js";
import { BRACKETED_PASTE_OFF, BRACKETED_PASTE_ON, MultilineComposer } from "./chat-input.js";
import { ENVIRONMENT_HELP, EXIT } from "./exit.js";
import { createCliLogger, type OutStream } from "./output.js";
import { addPermissionOptions, type PermissionCliFlags } from "./permission-flags.js";
import { projectOptions } from "./run-command.js";
import { retryText, runEndLine } from "./run-end.js";
import { exitCodeFor, ignoreClosedTerminal, leaveBy, onSignals, type StopSignal } from "./signals.js";
import { HELD, LOCK_WAIT, StatusLine } from "./status-line.js";
import { TerminalSanitizer, terminalLine, terminalText } from "./terminal.js";

type Env = Readonly<Record<string, string | undefined>>;

const PROMPT = "> ";
/** The prompt of a line that continues a multi-line prompt. */
const CONTINUATION = "… ";
const EXIT_WORDS = new Set(["/exit", "/quit"]);

const CHAT_HELP = `
In the chat:
  /exit or Ctrl-D       leave (the session stays in the store)
  \\ then Enter          continue the prompt on a new line (a paste keeps its lines too)
  Up / Down             earlier prompts of this project (kept in .gatehouse/chat-history.jsonl)
  Ctrl-C                cancel the current turn; at an empty prompt, twice to leave
  /help /reset /compact /status /permissions and plugin commands are answered by the runtime

Exit status:
    0  the chat ended
    1  the chat could not start
    2  bad input or configuration: a bad flag, gatehouse.json, model spec or scripted
       file, no model configured, a plugin that cannot be loaded
  130  a second Ctrl-C while a turn was still being cancelled: the chat left at once,
       without waiting for that turn (every process it started was killed first)

SIGTERM and SIGHUP (the terminal closed) cancel the turn under way like Ctrl-C; once it
is recorded, the chat ends by that signal (a shell shows 143 or 129).`;

/** `gatehouse chat`'s options as commander parses them (the same names as `run`'s). */
export interface ChatFlags extends PermissionCliFlags {
  readonly session?: string;
  readonly continue?: boolean;
  readonly resume?: string | boolean;
  readonly model?: string;
  readonly config?: string;
  readonly dataDir?: string;
  readonly settings?: string;
  readonly systemPrompt?: string;
  readonly appendSystemPrompt?: string;
  readonly maxTurns?: string;
  readonly verbose?: boolean;
}

export function registerChatCommand(program: Command): void {
  const chat: Command = program
    .command("chat")
    .summary("an interactive session in the terminal")
    .description(
      "An interactive session: streamed replies, tool progress, approvals asked inline. The session id is\nprinted at start; `gatehouse chat --session ID` or `--resume ID` resumes it, `--continue` the latest.\nA resumed chat shows its last exchanges. Configured exactly as `gatehouse run`.",
    )
    .option("--session <id>", "resume this session, or start one with this id (default: a new session)")
    .option("-c, --continue", "continue the most recent session of this project")
    .option("-r, --resume [id]", "resume a session: this one, or pick one from a list (on a terminal)");
  projectOptions(chat)
    .option("--max-turns <n>", 'model calls per turn at most (gatehouse.json "maxSteps", default 25)')
    .option("--verbose", "log model calls, tool calls and hook decisions to stderr (metadata, never content)");
  addPermissionOptions(chat)
    .addHelpText("after", `${CHAT_HELP}\n${ENVIRONMENT_HELP}`)
    .action(async (flags: ChatFlags) => {
      let ended: Termination | undefined;
      process.exitCode = await chatCommand(flags, {
        cwd: process.cwd(),
        env: process.env,
        stdin: process.stdin,
        stdout: process.stdout,
        stderr: process.stderr,
        interrupts: (listener) => onSignals(["SIGINT"], listener),
        terminations: (listener) =>
          onSignals(["SIGTERM", "SIGHUP"], (signal) => {
            ended ??= signal as Termination;
            if (signal === "SIGHUP") ignoreClosedTerminal();
            listener(signal as Termination);
          }),
      });
      // The turn was cancelled and recorded: the process ends by the signal (see leaveBy).
      if (ended !== undefined) await leaveBy(ended);
    });
}

/** The process around `gatehouse chat`, injectable for tests. */
export interface ChatIO {
  readonly cwd: string;
  readonly env: Env;
  readonly stdin: NodeJS.ReadableStream & { readonly isTTY?: boolean };
  readonly stdout: NodeJS.WritableStream & { readonly isTTY?: boolean };
  readonly stderr: OutStream;
  readonly interrupts?: (listener: () => void) => () => void;
  /** SIGTERM and SIGHUP: subscribe; returns an unsubscribe function. */
  readonly terminations?: (listener: (signal: Termination) => void) => () => void;
}

/** A signal that ends the chat: the turn under way is cancelled like by Ctrl-C, then the chat leaves. */
export type Termination = Exclude<StopSignal, "SIGINT">;

/**
 * Builds the Gatehouse the way `gatehouse run` does (same flags, gatehouse.json, environment,
 * tools, plugins and command hooks), then runs the session. Returns the exit status.
 */
export async function chatCommand(flags: ChatFlags, io: ChatIO): Promise<number> {
  const { CliStop } = await import("./project.js");
  const { openGatehouse, prepareGatehouse } = await import("./run.js");
  const log = createCliLogger(io.stderr, io.env, { verbose: flags.verbose === true });
  let close: (() => Promise<void>) | undefined;
  try {
    // A project whose settings would loosen the policy is asked about once, before they are read.
    await (await import("./trust.js")).confirmTrustOnTerminal(flags, io, log);
    const prepared = await prepareGatehouse(flags, io, log);
    const approvals = approverSlot();
    const tty = io.stdin.isTTY === true && io.stdout.isTTY === true;
    // Without a terminal nobody can be asked: no approver, so what would ask is denied as in `run`
    // (and no permission_prompt notification fires for a question nobody sees).
    const opened = await openGatehouse(prepared, io, log, tty ? { approver: approvals.approver } : {});
    close = opened.close;
    const { gatehouse } = opened;
    const { store } = gatehouse;
    const resume = await import("./resume.js");
    const { InputHistory } = await import("./chat-input.js");
    const picked = await resume.resolveSession(store, flags, io);
    if (picked.note) log.warn(picked.note);
    const sessionId = picked.sessionId;
    const existing = sessionId === undefined ? undefined : await store.getSession(sessionId);
    const color = tty && !io.env.NO_COLOR;
    const c = pc.createColors(color);
    const inputHistory = await InputHistory.open(prepared.settings.dataDir);
    const summary = await chatSession({
      gatehouse,
      input: io.stdin,
      output: io.stdout,
      errorOutput: io.stderr,
      isTTY: tty,
      color,
      ...(sessionId === undefined ? {} : { sessionId }),
      ...(existing ? { history: (await store.history(existing.id)).length } : {}),
      ...(existing && tty ? { recap: await resume.recapLines(store, existing.id, (who) => c.dim(`${who}:`)) } : {}),
      // Recalled text is drawn by readline as it is: an entry holding an escape sequence or a
      // control character (a hook's rewrite may) is not offered.
      inputHistory: inputHistory.entries.filter((entry) => terminalText(entry) === entry),
      // History is another place text persists: it keeps what the store kept of the prompt.
      afterTurn: async (result) => inputHistory.record(await resume.storedPrompts(store, result.runId)),
      approvals,
      ...(io.interrupts ? { interrupts: io.interrupts } : {}),
      ...(io.terminations ? { terminations: io.terminations } : {}),
    });
    // A turn that would not stop is left behind: closing would wait for it. The process exits
    // next, and every process group Gatehouse started is SIGKILLed as it does.
    if (summary.reason === "forced") close = undefined;
    // Leaving chat ends the session for this process (Claude Code's SessionEnd): typed /exit or
    // end of input is `prompt_input_exit`, a signal `other`. A forced exit does not wait for hooks.
    else if (summary.turns > 0)
      await gatehouse.endSession(
        summary.sessionId,
        summary.reason === "exit" || summary.reason === "eof" ? "input_exit" : "exit",
      );
    if (summary.signal !== undefined) return exitCodeFor(summary.signal);
    return summary.reason === "forced" ? EXIT.interrupted : EXIT.ok;
  } catch (error) {
    if (!(error instanceof CliStop)) throw error;
    for (const line of error.message.split("\n")) log.error(line);
    return error.code;
  } finally {
    await close?.();
  }
}

/**
 * The Gatehouse is built before the session that answers its approvals: it calls this slot's
 * `approver`, which forwards to whatever the session installed (denying while nothing is).
 */
export interface ApproverSlot {
  readonly approver: Approver;
  use(approver: Approver | undefined): void;
}

export function approverSlot(): ApproverSlot {
  let current: Approver | undefined;
  return {
    approver: (request, signal) => (current ? current(request, signal) : Promise.resolve("deny")),
    use(approver) {
      current = approver;
    },
  };
}

export interface ChatSessionOptions {
  /** What runs the turns: a Gatehouse (only `stream` is used). */
  readonly gatehouse: { stream(input: RunInput): RunStream };
  readonly input: NodeJS.ReadableStream;
  readonly output: NodeJS.WritableStream;
  /** Where diagnostics go when not on a terminal (default: `output`). */
  readonly errorOutput?: OutStream;
  /**
   * On a terminal: line editing, a `> ` prompt, a progress line, Ctrl-C read as a key, approvals
   * asked inline. Otherwise plain lines, no prompt, and approvals are denied (nobody to ask).
   */
  readonly isTTY: boolean;
  readonly color: boolean;
  /** Resume this session (or start one with this id). Default: a new random id. */
  readonly sessionId?: string;
  /** How many messages that session already has, when it exists (shown at start). */
  readonly history?: number;
  /** On a terminal: lines shown after the banner (the last exchanges of a resumed session). */
  readonly recap?: readonly string[];
  /** Earlier prompts for the line editor's Up key, newest first (a terminal only). */
  readonly inputHistory?: readonly string[];
  /** Called after each turn that has a result (e.g. to keep its stored prompt in the input history). */
  readonly afterTurn?: (result: RunResult) => Promise<void>;
  /** The session installs its inline approver here while it runs. */
  readonly approvals?: ApproverSlot;
  /** Interrupts from outside the input (SIGINT): subscribe; returns an unsubscribe function. */
  readonly interrupts?: (listener: () => void) => () => void;
  /** SIGTERM and SIGHUP: the turn under way is cancelled (a second one gives up on it), then the chat ends. */
  readonly terminations?: (listener: (signal: Termination) => void) => () => void;
}

export interface ChatSummary {
  /** The session the chat ended in (/reset moves to a new one). */
  readonly sessionId: string;
  /** Turns started (slash commands included). */
  readonly turns: number;
  /**
   * `/exit`, end of input (Ctrl-D), Ctrl-C at the prompt, a second Ctrl-C (or signal) while a turn
   * would not stop, or SIGTERM / SIGHUP.
   */
  readonly reason: "exit" | "eof" | "interrupt" | "forced" | "terminated";
  /** The SIGTERM or SIGHUP that ended the chat, if one did. */
  readonly signal?: Termination;
}

/** A turn under way: Ctrl-C aborts it; a second Ctrl-C gives up waiting for it. */
interface Turn {
  readonly controller: AbortController;
  cancelling: boolean;
  readonly force: () => void;
}

/**
 * The chat loop: read a line, stream its turn, repeat until `/exit`, end of input, or Ctrl-C at
 * an empty prompt. Ctrl-C during a turn cancels that turn only. Every turn continues the same
 * session, except after `/reset`, whose result names the new one.
 */
export async function chatSession(options: ChatSessionOptions): Promise<ChatSummary> {
  const { output, isTTY: tty } = options;
  const c = pc.createColors(options.color);
  const errorOutput = options.errorOutput ?? output;
  const view = new View(output, errorOutput, tty, c);
  const promptText = c.bold(c.cyan(PROMPT));
  const continuationText = c.dim(CONTINUATION);
  const rl = createInterface({
    input: options.input,
    ...(tty ? { output } : {}),
    terminal: tty,
    prompt: promptText,
    historySize: tty ? 500 : 0,
    ...(tty && options.inputHistory ? { history: [...options.inputHistory] } : {}),
  });
  const lines = new LineQueue();
  const composer = new MultilineComposer();
  let closed = false;
  rl.on("line", (line) => {
    // An approval's answer, or piped input (one line, one prompt), is taken as it is.
    if (!tty || lines.answering) return lines.push(line);
    const whole = composer.line(line);
    if (whole !== undefined) {
      rl.setPrompt(promptText);
      return lines.push(whole);
    }
    rl.setPrompt(continuationText);
    if (lines.atPrompt) rl.prompt();
  });
  rl.on("close", () => {
    closed = true;
    lines.end();
  });
  // A terminal that went away (SIGHUP) fails as readline restores its mode: that is the end of input.
  rl.on("error", () => lines.end());

  let sessionId = options.sessionId ?? randomUUID();
  let turns = 0;
  let turn: Turn | undefined;
  let reason: ChatSummary["reason"] = "eof";
  let hinted = false;

  const onInterrupt = () => {
    if (turn) {
      if (turn.cancelling) return turn.force();
      turn.cancelling = true;
      view.settle();
      if (tty) view.line(c.dim("^C cancelling the turn (Ctrl-C again to quit)"));
      turn.controller.abort();
      return;
    }
    // At the prompt: a typed line (or prompt of several) is dropped; an empty one asks first, then leaves.
    if (tty && !closed && (rl.line !== "" || composer.continuing)) {
      rl.write(null, { ctrl: true, name: "e" });
      output.write("\n");
      rl.write(null, { ctrl: true, name: "u" });
      hinted = false;
      if (composer.continuing) {
        composer.clear();
        rl.setPrompt(promptText);
        rl.prompt();
      }
      return;
    }
    if (tty && !hinted) {
      hinted = true;
      output.write(`\n${c.dim("(press Ctrl-C again or type /exit to leave)")}\n`);
      if (!closed) rl.prompt();
      return;
    }
    reason = "interrupt";
    if (tty) output.write("\n");
    lines.end();
  };
  rl.on("SIGINT", onInterrupt);
  let terminatedBy: Termination | undefined;
  const onTermination = (signal: Termination) => {
    if (terminatedBy !== undefined || turn?.cancelling) {
      terminatedBy ??= signal;
      return turn?.force();
    }
    terminatedBy = signal;
    if (turn) {
      turn.cancelling = true;
      view.settle();
      turn.controller.abort();
    }
    // No further line is run, typed ahead or not: the loop ends once the turn under way has wound down.
    lines.discard();
  };
  const unsubscribeTerminations = options.terminations?.(onTermination);
  // "Ctrl-C again" means the very next key.
  const onKey = (_text: unknown, key: { ctrl?: boolean; name?: string } | undefined) => {
    composer.key(key?.name);
    if (!(key?.ctrl && key.name === "c")) hinted = false;
  };
  if (tty) options.input.on("keypress", onKey);
  const unsubscribe = options.interrupts?.(onInterrupt);

  // Approvals are asked between the question and the user's next line; lines typed before the
  // question stay queued as prompts.
  let approvalChain: Promise<unknown> = Promise.resolve();
  const askInline = async (request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer> => {
    if (signal.aborted) return "deny";
    const { createTerminalApprover } = await import("./approver.js");
    const answers = Object.assign(new PassThrough({ encoding: "utf8" }), { isTTY: tty });
    // Without a terminal the approver denies without reading: the lines stay prompts.
    if (closed) answers.end();
    else if (tty) lines.answerTo(answers);
    let question = "";
    const asking: OutStream = {
      isTTY: tty,
      write(text, callback) {
        view.settle();
        // The question is the text after the last newline: readline redraws it when the answer is edited.
        const nl = text.lastIndexOf("\n");
        question = nl < 0 ? question + text : text.slice(nl + 1);
        if (tty && !closed) rl.setPrompt(question);
        return output.write(text, callback);
      },
    };
    try {
      return await createTerminalApprover({ input: answers, output: asking })(request, signal);
    } finally {
      lines.answerTo(undefined);
      answers.end();
      if (!closed) rl.setPrompt(promptText);
    }
  };
  options.approvals?.use((request, signal) => {
    const next = approvalChain.then(() => askInline(request, signal));
    approvalChain = next.catch(() => {});
    return next;
  });

  const runTurn = async (prompt: string): Promise<"done" | "forced"> => {
    const controller = new AbortController();
    let force: () => void = () => {};
    const forced = new Promise<"forced">((resolve) => {
      force = () => resolve("forced");
    });
    turn = { controller, cancelling: false, force };
    turns++;
    const shown: TurnView = { streamed: false, final: false, held: false, labels: new Map(), refused: new Set() };
    view.startTurn("thinking…");
    const work = (async () => {
      let result: RunResult | undefined;
      let failure: string | undefined;
      try {
        const stream = options.gatehouse.stream({
          prompt,
          sessionId,
          trigger: "user",
          channel: "cli",
          signal: controller.signal,
        });
        for await (const event of stream) render(event, shown, view, c);
        result = await stream.result;
      } catch (error) {
        failure = describe(error);
      }
      view.settle();
      if (result) {
        sessionId = result.sessionId;
        await options.afterTurn?.(result).catch((error: unknown) => {
          view.note(c.yellow(`input history not saved: ${terminalLine(describe(error))}`), "input history not saved");
        });
      }
      const outcome = result?.outcome ?? (controller.signal.aborted ? "cancelled" : "failed");
      if (outcome === "cancelled") view.note(c.yellow("turn cancelled"), "turn cancelled");
      else if (outcome === "failed" || outcome === "max_steps") {
        // The same line as `gatehouse run` prints for the same failure.
        const line = result ? runEndLine(result) : undefined;
        const message = terminalLine(maskSecrets(line ?? `run failed: ${failure ?? "unknown error"}`));
        view.note(c.red(`✗ ${message}`), message);
      } else if (tty && !shown.streamed && !shown.final && outcome !== "blocked") view.line(c.dim("(no reply)"));
      return "done" as const;
    })();
    try {
      return await Promise.race([work, forced]);
    } finally {
      turn = undefined;
    }
  };

  const resumed = options.history === undefined ? "new" : `resumed, ${options.history} messages`;
  if (tty) {
    view.line(`${c.bold("gatehouse chat")} ${c.dim(`· session ${sessionId} (${resumed})`)}`);
    view.line(c.dim("/help for commands · Ctrl-C cancels a turn · /exit or Ctrl-D leaves"));
    for (const line of options.recap ?? []) view.line(line);
    // Pasted text arrives marked, so its newlines do not send it (see MultilineComposer).
    output.write(BRACKETED_PASTE_ON);
  } else errorOutput.write(`gatehouse: chat session ${sessionId} (${resumed})\n`);

  try {
    for (;;) {
      const line = await lines.next(
        () => {
          if (tty && !closed) rl.prompt();
        },
        // A line typed while the last turn ran: show it where its prompt would have been.
        (queued) => {
          if (tty) output.write(`${promptText}${terminalLine(queued)}\n`);
        },
      );
      if (line === null) break;
      hinted = false;
      const prompt = line.trim();
      if (prompt === "") continue;
      if (EXIT_WORDS.has(prompt)) {
        reason = "exit";
        break;
      }
      if ((await runTurn(line)) === "forced") {
        reason = "forced";
        break;
      }
    }
  } finally {
    unsubscribe?.();
    unsubscribeTerminations?.();
    if (terminatedBy !== undefined && reason !== "forced") reason = "terminated";
    options.input.off("keypress", onKey);
    options.approvals?.use(undefined);
    view.settle();
    if (tty) {
      output.write(BRACKETED_PASTE_OFF);
      if (reason === "eof") output.write("\n");
      if (turns > 0 || options.history !== undefined)
        view.line(c.dim(`session ${sessionId} · resume with: gatehouse chat --session ${sessionId}`));
    }
    rl.close();
  }
  return { sessionId, turns, reason, ...(terminatedBy === undefined ? {} : { signal: terminatedBy }) };
}

/** Lines read so far, handed out one at a time; while an approval is asked, they answer it. */
class LineQueue {
  private readonly queued: string[] = [];
  private waiting: ((line: string | null) => void) | undefined;
  private ended = false;
  private answers: PassThrough | undefined;

  push(line: string): void {
    if (this.answers) this.answers.write(`${line}\n`);
    else if (this.waiting) this.take()(line);
    else this.queued.push(line);
  }

  end(): void {
    this.ended = true;
    this.answers?.end();
    this.waiting && this.take()(null);
  }

  /** Ends the queue, dropping the lines not handed out yet. */
  discard(): void {
    this.queued.length = 0;
    this.end();
  }

  answerTo(stream: PassThrough | undefined): void {
    this.answers = stream;
  }

  /** An approval question is waiting for its answer. */
  get answering(): boolean {
    return this.answers !== undefined;
  }

  /** The chat is at its prompt, waiting for a line. */
  get atPrompt(): boolean {
    return this.waiting !== undefined;
  }

  /** The next line, or null at the end; `onWait` runs when none is ready, `onQueued` when one was. */
  next(onWait: () => void, onQueued: (line: string) => void): Promise<string | null> {
    const line = this.queued.shift();
    if (line !== undefined) {
      onQueued(line);
      return Promise.resolve(line);
    }
    if (this.ended) return Promise.resolve(null);
    onWait();
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }

  private take(): (line: string | null) => void {
    const resolve = this.waiting as (line: string | null) => void;
    this.waiting = undefined;
    return resolve;
  }
}

type Colors = ReturnType<typeof pc.createColors>;

/** What one turn has shown so far. */
interface TurnView {
  streamed: boolean;
  final: boolean;
  /** An output gate holds the reply until it passed. */
  held: boolean;
  /** Tokens used so far, as the last step reported. */
  tokens?: number;
  /** Tool call id → how its line names it, e.g. `Bash(ls -la)`. */
  readonly labels: Map<string, string>;
  /** Calls whose refusal was shown (tool-blocked): their error result repeats it, so it is not shown again. */
  readonly refused: Set<string>;
}

/** The progress text while the model works: with an output gate, why no text streams. */
function thinking(shown: Pick<TurnView, "held" | "tokens">): string {
  const tokens = shown.tokens === undefined ? "" : ` · ${shown.tokens} tokens`;
  return shown.held ? `thinking…${tokens} ${HELD}` : `thinking…${tokens}`;
}

function render(event: RunEvent, shown: TurnView, view: View, c: Colors): void {
  switch (event.type) {
    case "run-start":
      shown.held = event.outputHeld;
      view.progress(thinking(shown));
      return;
    case "step":
      if (event.tokens !== undefined) shown.tokens = event.tokens;
      view.progress(thinking(shown));
      return;
    case "retry":
      view.progress(`${thinking(shown)} · ${retryText(event)}`);
      return;
    case "lock-wait":
      view.note(c.dim(LOCK_WAIT), LOCK_WAIT);
      return;
    case "text-delta":
      shown.streamed = true;
      view.text(event.delta);
      return;
    case "final":
      // Live text already showed the reply; held-back text (output gates) arrives only here.
      shown.final = true;
      if (!shown.streamed) view.text(event.text);
      view.settle();
      return;
    case "tool-call": {
      const label = toolLabel(event.toolName, event.input);
      shown.labels.set(event.toolCallId, label);
      view.progress(`${label} …`);
      return;
    }
    case "tool-result": {
      // Emitted only after after_tool_call passed; a withheld output is already the notice.
      if (shown.refused.has(event.toolCallId)) return;
      const label = shown.labels.get(event.toolCallId) ?? terminalLine(event.toolName);
      if (event.withheld)
        view.line(`${c.yellow("✓")} ${label} ${c.yellow(`— ${terminalLine(outputText(event.output))}`)}`);
      else if (event.isError) view.line(`${c.red("✗")} ${label} ${c.dim(`— ${clip(outputText(event.output), 200)}`)}`);
      else view.line(`${c.green("✓")} ${label}`);
      return;
    }
    case "tool-blocked":
      shown.refused.add(event.toolCallId);
      view.line(`${c.yellow("✗")} ${terminalLine(event.toolName)} ${c.yellow(`— ${terminalLine(event.message)}`)}`);
      return;
    case "approval-requested":
      view.settle();
      return;
    case "compacted":
      view.line(c.dim(`(compacted ${event.compactedCount} earlier messages)`));
      return;
    case "blocked":
      // Only what the event says: the user-facing message and who blocked, never a reason.
      view.line(
        c.red(
          `⛔ blocked by ${terminalLine(event.pluginId)} (${terminalLine(event.hook)}): ${terminalLine(event.message)}`,
        ),
      );
      return;
    case "run-end":
      return;
  }
}

/**
 * The terminal as the chat uses it: streamed text, whole lines, and on a TTY one transient
 * progress line (rewritten with `\r`, erased before anything else is written). Streamed text
 * goes through one sanitizer, so an escape sequence split across deltas is caught too.
 */
class View {
  /** The cursor is not at the start of a line. */
  private open = false;
  private readonly sanitizer = new TerminalSanitizer();
  /** The animated progress line (spinner, what is happening, elapsed time). */
  private readonly status: StatusLine;

  constructor(
    private readonly out: NodeJS.WritableStream,
    private readonly err: OutStream,
    private readonly tty: boolean,
    c: Colors,
  ) {
    this.status = new StatusLine(out, c.dim);
  }

  /** A new turn: the progress line's clock starts again. */
  startTurn(text: string): void {
    if (!this.tty) return;
    this.settle();
    this.status.start(text);
  }

  text(text: string): void {
    this.write(this.sanitizer.push(text));
  }

  private write(shown: string): void {
    if (shown === "") return;
    this.clearProgress();
    this.out.write(shown);
    this.open = !shown.endsWith("\n");
  }

  line(text: string): void {
    this.settle();
    this.out.write(`${text}\n`);
  }

  /** A diagnostic: on a terminal, a line of the chat; otherwise a `gatehouse:` line on stderr. */
  note(onTerminal: string, plain: string): void {
    if (this.tty) this.line(onTerminal);
    else this.err.write(`gatehouse: ${plain}\n`);
  }

  progress(text: string): void {
    if (!this.tty) return;
    this.settle();
    this.status.show(text);
  }

  /** No progress line, and the cursor at the start of a line (text held back by the sanitizer shown first). */
  settle(): void {
    this.write(this.sanitizer.end());
    this.clearProgress();
    if (this.open) {
      this.out.write("\n");
      this.open = false;
    }
  }

  private clearProgress(): void {
    this.status.hide();
  }
}

/** The input field that best names what a tool call does, Claude Code style: `Bash(ls -la)`. */
const LABEL_FIELDS = ["file_path", "command", "pattern", "path", "url", "query", "description", "prompt"];

function toolLabel(toolName: string, input: unknown): string {
  const name = terminalLine(toolName);
  if (!input || typeof input !== "object") return name;
  const fields = input as Record<string, unknown>;
  const key =
    LABEL_FIELDS.find((k) => typeof fields[k] === "string") ??
    Object.keys(fields).find((k) => typeof fields[k] === "string");
  return key === undefined ? name : `${name}(${clip(fields[key] as string, 60)})`;
}

function outputText(output: unknown): string {
  if (typeof output === "string") return output;
  try {
    return JSON.stringify(output) ?? "";
  } catch {
    return String(output);
  }
}

function clip(text: string, max: number): string {
  const flat = terminalLine(text);
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
