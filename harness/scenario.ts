import type { ScriptInput, ScriptTurn } from "../src/models/index.js";
import { forScenario, type Random } from "./random.js";

/**
 * R1 scenarios as plain data: which runs happen in which session, what the scripted model
 * answers in each, where the canaries sit and which verdict is meant to remove each one.
 * Everything is drawn from `forScenario(seed, index)`, so (seed, index) replays a scenario.
 */

/** The verdicts R1 plants, each removing (or, for delivery, keeping from the user) one canary. */
export const BLOCK_KINDS = [
  "prompt-gate",
  "ups",
  "withhold-plugin",
  "withhold-ptu",
  "response-block",
  "response-rewrite",
  "delivery-cancel",
  "delivery-rewrite",
] as const;
export type BlockKind = (typeof BLOCK_KINDS)[number];

/** Kinds that need the command-hook script configured. */
const COMMAND_HOOK_KINDS: readonly BlockKind[] = ["ups", "withhold-ptu"];

/**
 * `message_sending` acts on delivery only (DESIGN §3 step 11): the stored answer keeps its
 * text, so these canaries must stay out of what is delivered and out of logs and audit, and
 * must be on disk (which doubles as a control).
 */
export const DELIVERY_KINDS: readonly BlockKind[] = ["delivery-cancel", "delivery-rewrite"];

/** Content markers the policy plugin and the hook script act on. */
export const MARK = {
  promptGate: "BLOCK-PROMPT",
  ups: "BLOCK-UPS",
  withholdPlugin: "WITHHOLD-PLUGIN",
  withholdPtu: "BLOCK-PTU",
  responseBlock: "BLOCK-RESPONSE",
  cancel: "CANCEL-DELIVERY",
} as const;

/** What the hook script prints on stderr when it rejects a prompt: the reason users see. */
export const UPS_NOTICE = "The prompt hook rejected this prompt.";

export interface Target {
  readonly k: number;
  readonly canary: string;
  readonly kind: BlockKind;
  /** The run in which the verdict applies (a sub-agent's own tag for its verdicts). */
  readonly runTag: string;
  /** Where the canary was put, for the report. */
  readonly where: string;
  /** For rewrites: the text that takes the canary's place (must be found where the canary was). */
  readonly replacement?: string;
  /** Delivery rewrites: the canary sat in the final text, so the reply must carry the replacement. */
  readonly inReply?: boolean;
}

export interface PlannedRun {
  readonly tag: string;
  /** Index of the session, for top-level runs. */
  readonly session: number;
  readonly prompt: string;
  readonly stream: boolean;
  readonly block?: BlockKind;
  /** The notice the policy returns for a prompt-gate or response block (user-facing). */
  readonly notice?: string;
  /** The internal reason the policy returns with it (must never leave the process). */
  readonly reason?: string;
}

export type StoreKind = "sqlite" | "memory" | "postgres";

export interface Scenario {
  readonly seed: number;
  readonly index: number;
  readonly store: StoreKind;
  readonly commandHooks: boolean;
  readonly compaction: { readonly contextTokens: number; readonly keepRecent: number };
  /** Top-level runs in the order they are run; `/compact` runs have tag "". */
  readonly runs: readonly PlannedRun[];
  /** Sub-agent runs, by tag (started by the parent's Agent tool calls). */
  readonly children: readonly PlannedRun[];
  readonly script: ScriptInput;
  /** What the Lookup tool answers, by key. */
  readonly lookup: Readonly<Record<string, string>>;
  readonly targets: readonly Target[];
  /** Canaries that nothing removes: each must be found in the store (proves the scan sees it). */
  readonly controls: readonly string[];
  /** Internal reasons: never anywhere, at any time. */
  readonly reasons: readonly string[];
  /** For rewrites, by target canary. */
  readonly replacements: Readonly<Record<string, string>>;
}

export interface GenerateOptions {
  /** Stores to draw from (weights by repetition). */
  readonly stores: readonly StoreKind[];
  /** Chance that a scenario configures the command-hook script (needed by ups / withhold-ptu). */
  readonly commandHookRate?: number;
  /**
   * Plant canaries in sub-agent answers that the parent then withholds (default true): the
   * parent's verdict must reach the child's own session, where the answer was stored first.
   */
  readonly childDerived?: boolean;
}

const TOP_KINDS: readonly (BlockKind | undefined)[] = [undefined, undefined, undefined, ...BLOCK_KINDS];
const CHILD_KINDS: readonly (BlockKind | undefined)[] = [
  undefined,
  undefined,
  "withhold-plugin",
  "withhold-ptu",
  "response-block",
  "response-rewrite",
];

export function generateScenario(seed: number, index: number, options: GenerateOptions): Scenario {
  return new Builder(seed, index, options).build();
}

class Builder {
  private readonly rng: Random;
  private k = 0;
  private readonly targets: Target[] = [];
  private readonly controls: string[] = [];
  private readonly reasons: string[] = [];
  private readonly replacements: Record<string, string> = {};
  private readonly lookup: Record<string, string> = {};
  private readonly scriptRuns: { match: string; turns: ScriptTurn[] }[] = [];
  private readonly children: PlannedRun[] = [];
  private readonly commandHooks: boolean;

  constructor(
    private readonly seed: number,
    private readonly index: number,
    private readonly options: GenerateOptions,
  ) {
    this.rng = forScenario(seed, index);
    this.commandHooks = this.rng.chance(options.commandHookRate ?? 0.2);
  }

  build(): Scenario {
    const { rng } = this;
    const store = rng.pick(this.options.stores);
    const compaction = rng.chance(0.35)
      ? { contextTokens: 1_000_000, keepRecent: 6 }
      : { contextTokens: rng.int(40, 700), keepRecent: rng.int(0, 4) };
    const runs: PlannedRun[] = [];
    const sessions = rng.int(1, 2);
    for (let s = 0; s < sessions; s++) {
      const count = rng.int(1, 4);
      for (let r = 0; r < count; r++) {
        if (r > 0 && rng.chance(0.12)) runs.push({ tag: "", session: s, prompt: "/compact", stream: false });
        runs.push(this.run(`s${s}r${r}`, s, 0));
      }
    }
    return {
      seed: this.seed,
      index: this.index,
      store,
      commandHooks: this.commandHooks,
      compaction,
      runs,
      children: this.children,
      script: { runs: this.scriptRuns },
      lookup: this.lookup,
      targets: this.targets,
      controls: this.controls,
      reasons: this.reasons,
      replacements: this.replacements,
    };
  }

  private token(prefix: string, id: string | number): string {
    return `${prefix}-${this.seed}-${this.index}-${id}-${this.rng.hex(8)}`;
  }

  private target(kind: BlockKind, runTag: string, where: string, extra: Partial<Target> = {}): string {
    const k = this.k++;
    const canary = this.token("CANARY", k);
    this.targets.push({ k, canary, kind, runTag, where, ...extra });
    return canary;
  }

  private rewriteTarget(kind: BlockKind, runTag: string, where: string, inReply = false): string {
    const replacement = this.token("REDACTED", this.k);
    const canary = this.target(kind, runTag, where, { replacement, inReply });
    this.replacements[canary] = replacement;
    return canary;
  }

  private control(): string {
    const canary = this.token("CANARY", `c${this.controls.length}`);
    this.controls.push(canary);
    return canary;
  }

  private pickKind(depth: number): BlockKind | undefined {
    const kinds = depth === 0 ? TOP_KINDS : CHILD_KINDS;
    for (;;) {
      const kind = this.rng.pick(kinds);
      if (kind === undefined || this.commandHooks || !COMMAND_HOOK_KINDS.includes(kind)) return kind;
    }
  }

  /** One run (top-level or sub-agent): its prompt, its script, its canaries. */
  private run(tag: string, session: number, depth: number, derived?: string): PlannedRun {
    const { rng } = this;
    const block = derived === undefined ? this.pickKind(depth) : undefined;
    const stream = depth === 0 && rng.chance(0.4);
    let prompt = `[${tag}] Please work on task ${tag}.`;
    let notice: string | undefined;
    let reason: string | undefined;
    if (block === "prompt-gate" || block === "ups") {
      const marker = block === "prompt-gate" ? MARK.promptGate : MARK.ups;
      prompt += ` ${marker} ${this.target(block, tag, "the user's prompt")}`;
      if (block === "prompt-gate") {
        notice = this.token("NOTICE", tag);
        reason = this.token("REASON", tag);
        this.reasons.push(reason);
      }
      // Never answered: the gate stops the run before any model call.
      this.scriptRuns.push({ match: `^\\[${tag}\\]`, turns: [{ text: `never ${tag}` }] });
      return { tag, session, prompt, stream, block, ...(notice ? { notice, reason } : {}) };
    }
    if (depth === 0) prompt += ` ${this.control()}`;
    if (block === "response-block") notice = this.token("NOTICE", tag);
    if (block === "delivery-cancel") {
      reason = this.token("REASON", tag);
      this.reasons.push(reason);
    }

    const turns: ScriptTurn[] = [];
    const needsTool = block === "withhold-plugin" || block === "withhold-ptu";
    // A child whose answer the parent withholds answers at once: its whole run goes with the verdict.
    const steps = derived === undefined ? Math.max(needsTool ? 1 : 0, rng.int(0, 3)) : 0;
    const withholdAt = needsTool ? rng.int(0, steps - 1) : -1;
    for (let step = 0; step < steps; step++) {
      const calls: NonNullable<ScriptTurn["toolCalls"]> = [];
      const count = rng.int(1, 2);
      for (let i = 0; i < count; i++) {
        const id = `${tag}_${step}_${i}`;
        const roll = rng.next();
        const withhold = step === withholdAt && i === 0;
        if (withhold && depth === 0 && this.options.childDerived !== false && rng.chance(0.5)) {
          // The withheld output is a sub-agent's answer: the parent's verdict, the child's session.
          const child = `${tag}c${this.children.length}`;
          const kind = block as BlockKind;
          const canary = this.target(kind, tag, `a sub-agent's answer (${child}) the parent withholds`);
          const marker = kind === "withhold-plugin" ? MARK.withholdPlugin : MARK.withholdPtu;
          calls.push({
            id,
            name: "Agent",
            input: { description: `subtask ${child}`, prompt: `[${child}] Sub-task for ${tag}.` },
          });
          this.children.push(this.run(child, session, depth + 1, `${marker} ${canary}`));
        } else if (withhold || roll < 0.5) {
          calls.push({ id, name: "Lookup", input: { key: id } });
          this.lookup[id] = this.lookupValue(tag, block, withhold);
        } else if (roll < 0.72 || depth > 0) {
          calls.push({ id, name: "Echo", input: { text: `echo ${id}` } });
        } else {
          const child = `${tag}c${this.children.length}`;
          calls.push({
            id,
            name: "Agent",
            input: { description: `subtask ${child}`, prompt: `[${child}] Sub-task for ${tag}.` },
          });
          this.children.push(this.run(child, session, depth + 1));
        }
      }
      turns.push({ ...this.assistantText(tag, block, `step ${step}`, false, depth), toolCalls: calls });
    }
    const final = this.assistantText(tag, block, "final", true, depth);
    turns.push(derived === undefined ? final : { text: `final of ${tag} ${derived}` });
    this.scriptRuns.push({ match: `^\\[${tag}\\]`, turns });
    return {
      tag,
      session,
      prompt,
      stream,
      ...(block ? { block } : {}),
      ...(notice ? { notice } : {}),
      ...(reason ? { reason } : {}),
    };
  }

  private lookupValue(tag: string, block: BlockKind | undefined, withhold: boolean): string {
    if (withhold) {
      const marker = block === "withhold-plugin" ? MARK.withholdPlugin : MARK.withholdPtu;
      return `secret ${marker} ${this.target(block as BlockKind, tag, "a Lookup output")}`;
    }
    // A response block removes the run's tool messages too: their content goes with it.
    if (block === "response-block") return `data ${this.target(block, tag, "a Lookup output of a blocked run")}`;
    return `data ${this.control()}`;
  }

  /**
   * An assistant turn's text, sometimes multi-part (text, reasoning, text). Canaries go where
   * the run's verdict removes them: every text and reasoning of a blocked run; texts (and the
   * reasoning beside them) of a rewritten one; the final text for delivery verdicts.
   */
  private assistantText(
    tag: string,
    block: BlockKind | undefined,
    label: string,
    final: boolean,
    depth: number,
  ): ScriptTurn {
    const { rng } = this;
    if (!final && rng.chance(0.45)) return {};
    const turn: { text?: string; parts?: NonNullable<ScriptTurn["parts"]>; chunks?: number } = {};
    const bits: string[] = [`${label} of ${tag}`];
    let rewritten = false;
    if (block === "response-block") {
      bits.push(this.target(block, tag, `${label} text`));
      if (final) bits.push(MARK.responseBlock);
    } else if (block === "response-rewrite" && (final || rng.chance(0.6))) {
      bits.push(this.rewriteTarget(block, tag, `${label} text`, final && depth === 0));
      rewritten = true;
    } else if (final && (block === "delivery-cancel" || block === "delivery-rewrite")) {
      bits.push(
        block === "delivery-cancel"
          ? `${MARK.cancel} ${this.target(block, tag, "final text")}`
          : this.rewriteTarget(block, tag, "final text", true),
      );
    }
    if (final && rng.chance(0.3)) bits.push("(saw {{lastToolResult}})");
    const text = bits.join(" ");
    if (rng.chance(0.4)) {
      // Multi-part: the text split around a reasoning part.
      let reasoning = `reasoning for ${label} of ${tag}`;
      if (block === "response-block") reasoning += ` ${this.target(block, tag, `${label} reasoning`)}`;
      // A rewritten message loses its reasoning: what sat there goes too.
      else if (rewritten) reasoning += ` ${this.target(block as BlockKind, tag, `${label} reasoning`)}`;
      const cut = text.indexOf(" ");
      turn.parts = [
        { type: "text", text: text.slice(0, cut + 1) },
        { type: "reasoning", text: reasoning },
        { type: "text", text: text.slice(cut + 1) },
      ];
    } else {
      turn.text = text;
      if (rng.chance(0.3)) turn.chunks = rng.int(2, 4);
    }
    return turn;
  }
}

/** One line saying what a scenario does, printed with a failing seed. */
export function describeScenario(s: Scenario): string {
  const runs = s.runs.map((r) =>
    r.tag ? `${r.tag}${r.block ? `:${r.block}` : ""}${r.stream ? "~" : ""}` : "/compact",
  );
  const children = s.children.map((r) => `${r.tag}${r.block ? `:${r.block}` : ""}`);
  const compaction =
    s.compaction.contextTokens >= 1_000_000
      ? "no compaction"
      : `compaction>${s.compaction.contextTokens}t keep ${s.compaction.keepRecent}`;
  return [
    `seed ${s.seed} index ${s.index}`,
    `store ${s.store}`,
    s.commandHooks ? "command hooks" : "no command hooks",
    compaction,
    `runs [${runs.join(" ")}]`,
    children.length ? `sub-agents [${children.join(" ")}]` : "",
    `${s.targets.length} targets, ${s.controls.length} controls`,
  ]
    .filter(Boolean)
    .join("; ");
}
