// A session's title, as every surface shows it: the one someone gave it (`sessions rename`, the
// server's API), else its first prompt as the store keeps it — read from the messages, never
// copied: the store holds only what passed the input gates, and a scrub that removes the prompt
// takes that title with it. `sessions list`, the resume picker and the console all read it here.
import { type Message, messageText } from "../core/message.js";
import type { SessionListing, StoreView } from "../store/types.js";

/** How many messages the title search reads. */
const TITLE_SCAN = 50;
/** How long a title is shown. */
export const TITLE_CHARS = 80;

/** Whether a stored user message is a prompt (not the notice a blocked prompt left). */
export function isPrompt(message: Message): boolean {
  return message.role === "user" && message.metadata.blockedBy === undefined && messageText(message).trim() !== "";
}

/** The text of the first prompt the session's store kept; null when none (yet). */
export async function firstPromptText(store: StoreView, sessionId: string): Promise<string | null> {
  const first = (await store.sessionMessages(sessionId, { afterSeq: 0, limit: TITLE_SCAN })).find(isPrompt);
  return first === undefined ? null : messageText(first);
}

/**
 * Titles of these sessions, by id: the given one, else the first stored prompt (null: neither),
 * each made one line by `line` (a terminal's sanitizing clip, the console's plain one).
 */
export async function sessionTitles(
  store: StoreView,
  sessions: readonly Pick<SessionListing, "id" | "title">[],
  line: (text: string) => string,
): Promise<Map<string, string | null>> {
  const titles = new Map<string, string | null>();
  for (const s of sessions) {
    const text = s.title ?? (await firstPromptText(store, s.id));
    titles.set(s.id, text === null ? null : line(text));
  }
  return titles;
}
