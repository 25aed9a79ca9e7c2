import type { MessageWriter } from "../../store/types.js";
import type { RuntimeDeps } from "../deps.js";
import { doorChannel, type RunState } from "../state.js";
import type { TextEvent } from "../types.js";

/**
 * The only write capability of the runtime (docs/lifecycle.md, "The doors"). Code outside
 * src/runtime/doors/ holds the store as a `StoreView` and a run as a `RunState`, neither of which
 * can store or show text; this module opens the two capabilities they hide — the store's message
 * writer, kept in `RuntimeDeps.doors`, and a run's text channel — and only the doors import it
 * (test/runtime/doors-architecture.test.ts checks that second line).
 */

let writerOf: (doors: Doors) => MessageWriter;

/**
 * The store's message writer, sealed: an instance has no member anyone can call. The assembly
 * makes one from the store it opened; only this module can open it again.
 */
export class Doors {
  readonly #writer: MessageWriter;

  constructor(writer: MessageWriter) {
    this.#writer = writer;
  }

  static {
    writerOf = (doors) => doors.#writer;
  }
}

/** What a door writes one run's text with. */
export interface Outbox {
  /** Writes, rewrites and removes the session's messages. */
  readonly store: MessageWriter;
  /** Shows the user text (a delta, a tool call or result, a block, the final reply). */
  emitText(event: TextEvent): void;
  /** Sets what the run delivered: null when nothing was. */
  deliver(text: string | null): void;
}

/** The outbox of a run: its store writer and its text channel. */
export function outbox(deps: RuntimeDeps, state: RunState): Outbox {
  return { store: writerOf(deps.doors), ...doorChannel(state) };
}

/** The store's message writer, for the doors' work outside any run (recovery of interrupted runs). */
export function storeWriter(deps: RuntimeDeps): MessageWriter {
  return writerOf(deps.doors);
}
