import { statSync } from "node:fs";
import { HOOK_NAMES, type HookName } from "../src/hooks/index.js";
import { definePlugin, type PluginDefinition } from "../src/plugins/index.js";
import type { Gatehouse, RunStream } from "../src/runtime/gatehouse.js";
import type { RunEvent } from "../src/runtime/types.js";
import { tagOf } from "./world.js";

/**
 * Everything a scenario delivered, in one order: hook events (stamped when emitted, so a
 * detached observer that runs late still counts as before a block it preceded), model calls,
 * stream events, and a marker each time a verdict took effect. "After the block" means after
 * that marker.
 */
export type MarkerKind =
  | "prompt-block"
  | "compaction-block"
  | "tool-block"
  | "call-rewrite"
  | "withhold"
  | "response-block"
  | "response-rewrite"
  | "delivery-cancel"
  | "delivery-rewrite"
  | "permission-deny"
  | "revise"
  /** `before_message_write` kept a message out of the store (issue 30). */
  | "write-block";

export type Entry =
  | {
      readonly seq: number;
      readonly type: "hook";
      readonly hook: HookName;
      readonly runId: string;
      readonly event: unknown;
    }
  | { readonly seq: number; readonly type: "model"; readonly prompt: unknown }
  | { readonly seq: number; readonly type: "stream"; readonly event: RunEvent }
  | {
      readonly seq: number;
      readonly type: "marker";
      readonly kind: MarkerKind;
      readonly hook: HookName;
      readonly runId: string;
      readonly pluginId: string;
      readonly event: unknown;
      /** Size of the command-hook payload log at the moment of the verdict. */
      readonly hookLogBytes: number;
      /** A permission denial: what denied it (`rule`, `hook`, `nobody`…), the rule's source, and whether the model may retry. */
      readonly denial?: { readonly deniedBy: string; readonly source?: string; readonly retry: boolean };
    };

/** An entry before it is stamped (distributes over the union). */
export type NewEntry = Entry extends infer E ? (E extends Entry ? Omit<E, "seq"> : never) : never;

type Outcome = {
  outcome?: string;
  by?: { pluginId: string };
  result?: Record<string, unknown>;
  decidedBy?: { pluginId: string };
};

export class Timeline {
  readonly entries: Entry[] = [];
  private readonly texts = new Map<Entry, string>();
  /** Who denied each call a `permission_request` handler denied, by tool call id. */
  private readonly requestDenials = new Map<string, string>();
  private seq = 0;

  constructor(private readonly hookLog?: string) {}

  push(entry: NewEntry): void {
    this.entries.push({ ...entry, seq: this.seq++ } as Entry);
  }

  /** An entry as text, computed once (events are frozen snapshots, so this is what was delivered). */
  text(entry: Entry): string {
    let text = this.texts.get(entry);
    if (text === undefined) {
      const body =
        entry.type === "hook" || entry.type === "marker"
          ? entry.event
          : entry.type === "model"
            ? entry.prompt
            : entry.event;
      text = JSON.stringify(body) ?? "";
      this.texts.set(entry, text);
    }
    return text;
  }

  markers(): Extract<Entry, { type: "marker" }>[] {
    return this.entries.filter((e): e is Extract<Entry, { type: "marker" }> => e.type === "marker");
  }

  /** runId of the run whose input names `[tag]` (`[tag] …` or `/command [tag] …`; top-level and sub-agent runs alike). */
  runIdOf(tag: string): string | undefined {
    for (const e of this.entries) {
      if (e.type !== "hook" || e.hook !== "message_received") continue;
      const content = (e.event as { content?: unknown }).content;
      if (typeof content === "string" && tagOf(content) === tag) return e.runId;
    }
    return undefined;
  }

  /**
   * Intercepts the engine: every dispatch is recorded when it is called, and each outcome that
   * is a verdict (block, withhold, rewrite, cancel) adds a marker before the caller resumes.
   */
  tap(gatehouse: Gatehouse): void {
    gatehouse.engine.intercept({
      name: "timeline",
      call: (d) => this.push({ type: "hook", hook: d.hook, runId: d.run.runId, event: d.event }),
      result: (d, out) => {
        if (out) this.verdict(d.hook, d.run.runId, d.event, out as Outcome);
      },
    });
  }

  /** Records stream events when the run pushes them, not when the consumer reads them. */
  tapStream(stream: RunStream): void {
    const channel = stream as unknown as { push: (e: RunEvent) => void };
    const push = channel.push.bind(channel);
    channel.push = (event) => {
      this.push({ type: "stream", event });
      push(event);
    };
  }

  private verdict(hook: HookName, runId: string, event: unknown, o: Outcome | undefined): void {
    if (!o) return;
    const result = o.result ?? {};
    const changed = (field: string) => {
      const before = (event as Record<string, unknown>)[field];
      return result[field] !== undefined && JSON.stringify(result[field]) !== JSON.stringify(before);
    };
    let kind: MarkerKind | undefined;
    let pluginId = o.decidedBy?.pluginId ?? "";
    const fields = event as Record<string, unknown>;
    if (hook === "permission_request" && result.deny) {
      // Not yet the end of the denial: permission_denied, which is told of it, follows.
      this.requestDenials.set(String(fields.toolCallId), pluginId);
      return;
    }
    if (hook === "permission_denied") {
      // The denial is complete once its handlers have seen it (they see the call, as the hook that denied did).
      const deniedBy = String(fields.deniedBy);
      const by =
        deniedBy === "rule"
          ? "permissions"
          : deniedBy === "hook"
            ? this.requestDenials.get(String(fields.toolCallId))
            : deniedBy;
      const denial = {
        deniedBy,
        ...(typeof fields.source === "string" ? { source: fields.source } : {}),
        retry: result.retry === true,
      };
      this.push({
        type: "marker",
        kind: "permission-deny",
        hook,
        runId,
        pluginId: by ?? "",
        event,
        hookLogBytes: this.hookLogSize(),
        denial,
      });
      return;
    }
    if ((hook === "before_input" || hook === "before_agent_run") && o.outcome === "block") {
      kind = "prompt-block";
      pluginId = o.by?.pluginId ?? "";
    } else if (hook === "before_compaction" && result.block) kind = "compaction-block";
    else if (hook === "before_tool_call" && result.block) kind = "tool-block";
    else if (hook === "before_tool_call" && changed("params")) kind = "call-rewrite";
    else if (hook === "after_tool_call" && result.block) kind = "withhold";
    else if (hook === "before_response_emit" && result.block) kind = "response-block";
    else if (hook === "before_response_emit" && (changed("allContent") || changed("content")))
      kind = "response-rewrite";
    else if (hook === "message_sending" && result.cancel) kind = "delivery-cancel";
    else if (hook === "message_sending" && changed("content")) kind = "delivery-rewrite";
    else if (hook === "before_agent_finalize" && result.action === "revise") kind = "revise";
    else if (hook === "before_message_write" && result.block) kind = "write-block";
    if (kind === undefined) return;
    this.push({ type: "marker", kind, hook, runId, pluginId, event, hookLogBytes: this.hookLogSize() });
  }

  private hookLogSize(): number {
    if (!this.hookLog) return 0;
    try {
      return statSync(this.hookLog).size;
    } catch {
      return 0;
    }
  }
}

/** A plugin with a no-opinion handler on every hook, so that the runtime emits every event. */
export function tapPlugin(): PluginDefinition {
  return definePlugin({
    id: "tap",
    setup(api) {
      for (const hook of HOOK_NAMES) api.on(hook, (() => undefined) as never, { priority: 1000 });
    },
  });
}
