// Picking up a conversation: `--continue` (the latest session), `--resume [id]` (a session, or a
// picker on a terminal), a session's title (runtime/session-titles.ts, which the console reads
// too), and the recap a resumed chat prints.
import { createInterface } from "node:readline";
import { messageText } from "../core/message.js";
import { firstPromptText, isPrompt, TITLE_CHARS, sessionTitles as titlesOf } from "../runtime/session-titles.js";
import type { SessionListing, StoreView } from "../store/types.js";
import { EXIT } from "./exit.js";
import { clip, shortTime } from "./format.js";
import type { OutStream } from "./output.js";
import { CliStop } from "./project.js";
import { terminalLine } from "./terminal.js";

/** The flags that pick the session to continue (`run` and `chat`). */
export interface ResumeFlags {
  readonly session?: string;
  readonly continue?: boolean;
  /** `--resume` alone is `true`: pick one. */
  readonly resume?: string | boolean;
}

/** How many sessions the picker offers. */
const PICKER_SIZE = 20;

/** Exits 2 when more than one of `--session`, `--continue`, `--resume` is given. */
export function checkResumeFlags(flags: ResumeFlags): void {
  const given = [
    flags.session !== undefined && "--session",
    flags.continue === true && "--continue",
    flags.resume !== undefined && flags.resume !== false && "--resume",
  ].filter(Boolean);
  if (given.length > 1) throw new CliStop(EXIT.usage, `${given.join(" and ")}: give only one`);
}

/** The first prompt the session's store kept, as one line; null when none (yet). */
export async function firstPrompt(store: StoreView, sessionId: string): Promise<string | null> {
  const text = await firstPromptText(store, sessionId);
  return text === null ? null : clip(text, TITLE_CHARS);
}

/** Titles of these sessions, by id, as a terminal shows them (the given one, else the first stored prompt). */
export function sessionTitles(
  store: StoreView,
  sessions: readonly Pick<SessionListing, "id" | "title">[],
): Promise<Map<string, string | null>> {
  return titlesOf(store, sessions, (text) => clip(text, TITLE_CHARS));
}

/** What a run kept of its prompt: the text the store holds for it (none when a gate blocked it). */
export async function storedPrompts(store: StoreView, runId: string): Promise<string[]> {
  return (await store.runMessages(runId)).filter(isPrompt).map(messageText);
}

export interface ResumeIO {
  readonly stdin: NodeJS.ReadableStream & { readonly isTTY?: boolean };
  readonly stderr: OutStream;
}

/**
 * The session `--session`, `--continue` or `--resume` names, checked against the store:
 * undefined starts a new one. `--continue` with no session yet starts one; `--resume ID` must
 * exist; `--resume` alone asks on a terminal and is a usage error elsewhere.
 */
export async function resolveSession(
  store: StoreView,
  flags: ResumeFlags,
  io: ResumeIO,
): Promise<{ readonly sessionId?: string; readonly note?: string }> {
  checkResumeFlags(flags);
  if (flags.session !== undefined) return { sessionId: flags.session };
  if (flags.continue) {
    const [latest] = await store.listSessions({ limit: 1, parentSessionId: null });
    return latest === undefined ? { note: "no earlier session: starting a new one" } : { sessionId: latest.id };
  }
  if (typeof flags.resume === "string") {
    const session = await store.getSession(flags.resume);
    if (!session)
      throw new CliStop(EXIT.failed, `--resume: no session "${clip(flags.resume, 80)}" in this project's store`);
    return { sessionId: session.id };
  }
  if (flags.resume === true) return { sessionId: await pickSession(store, io) };
  return {};
}

async function pickSession(store: StoreView, io: ResumeIO): Promise<string> {
  if (!(io.stdin.isTTY && io.stderr.isTTY))
    throw new CliStop(EXIT.usage, "--resume: give a session id (there is no terminal to pick one on)");
  const sessions = await store.listSessions({ limit: PICKER_SIZE, parentSessionId: null });
  if (sessions.length === 0) throw new CliStop(EXIT.failed, "--resume: no sessions in this project's store");
  const titles = await sessionTitles(store, sessions);
  const lines = sessions.map((s, i) => {
    const n = String(i + 1).padStart(2);
    // Ids made through the server's API are any text: shown sanitized, like the titles.
    return `${n}. ${shortTime(s.updatedAt)}  ${titles.get(s.id) ?? "(no prompt)"}  ${terminalLine(s.id)}\n`;
  });
  io.stderr.write(`Sessions, most recent first:\n${lines.join("")}`);
  const rl = createInterface({ input: io.stdin, output: io.stderr as NodeJS.WritableStream, terminal: true });
  try {
    for (;;) {
      const answer = await new Promise<string | null>((resolve) => {
        rl.once("close", () => resolve(null));
        rl.question(`Resume which (1-${sessions.length}, Enter for 1)? `, resolve);
      });
      if (answer === null) throw new CliStop(EXIT.usage, "--resume: no session picked");
      const n = answer.trim() === "" ? 1 : Number(answer.trim());
      const picked = Number.isInteger(n) ? sessions[n - 1] : undefined;
      if (picked) return picked.id;
    }
  } finally {
    rl.close();
  }
}

/** How many exchanges (a prompt and what answered it) a resumed chat shows. */
const RECAP_EXCHANGES = 3;

/**
 * The last exchanges of a session as the store holds them (what the model sees: summaries stand
 * for what compaction folded away), one line each, clipped; `label` colors the speaker.
 */
export async function recapLines(
  store: StoreView,
  sessionId: string,
  label: (who: "you" | "assistant" | "summary") => string,
): Promise<string[]> {
  const shown = (await store.history(sessionId)).filter(
    (m) => (m.role === "user" || m.role === "assistant" || m.role === "summary") && messageText(m).trim() !== "",
  );
  const starts = shown.flatMap((m, i) => (m.role === "user" ? [i] : []));
  const from = starts.length > RECAP_EXCHANGES ? (starts.at(-RECAP_EXCHANGES) ?? 0) : 0;
  return shown.slice(from).map((m) => {
    const who = m.role === "user" ? "you" : m.role === "summary" ? "summary" : "assistant";
    return `${label(who)} ${clip(messageText(m), 200)}`;
  });
}
