import type { z } from "zod";
import type { GateAnswer, HookCatalog, HookName } from "./catalog.js";
import type { RunContext } from "./run-context.js";

type Spec<K extends HookName> = HookCatalog[K];
type ResultSchemaOf<K extends HookName> = Spec<K> extends { result: infer R extends z.ZodType } ? R : never;
type RulesOf<K extends HookName> = Spec<K> extends { rules: infer R } ? R : Record<never, never>;

/** The event a hook's handlers receive (without the chain extras). */
export type HookEvent<K extends HookName> = z.output<Spec<K>["event"]>;

/** What one handler of hook K may return. */
export type HookResult<K extends HookName> = Spec<K>["kind"] extends "gate"
  ? GateAnswer
  : Spec<K>["kind"] extends "observe"
    ? never
    : z.input<ResultSchemaOf<K>>;

type ChainFields<K extends HookName> = {
  [F in keyof RulesOf<K>]: RulesOf<K>[F] extends { rule: "chain" } ? F : never;
}[keyof RulesOf<K>];

/**
 * Frozen. Hooks with chain fields also carry `original`: the event as the runtime built it,
 * before any handler's rewrite.
 */
export type HandlerEvent<K extends HookName> = Readonly<HookEvent<K>> &
  ([ChainFields<K>] extends [never] ? unknown : { readonly original: Readonly<HookEvent<K>> });

/** What every handler gets besides its event: the run context, its plugin, and a signal. */
export interface HookContext extends Omit<RunContext, "signal"> {
  readonly hook: HookName;
  readonly pluginId: string;
  /** Aborted when this handler times out or the run is cancelled. */
  readonly signal: AbortSignal;
}

// biome-ignore lint/suspicious/noConfusingVoidType: a handler with no opinion returns nothing
type NoOpinion = void | undefined;
export type HandlerReturn<K extends HookName> = Spec<K>["kind"] extends "sync"
  ? HookResult<K> | NoOpinion
  : HookResult<K> | NoOpinion | Promise<HookResult<K> | NoOpinion>;

export type HookHandler<K extends HookName> = (event: HandlerEvent<K>, ctx: HookContext) => HandlerReturn<K>;

type ResultOutput<K extends HookName> = z.output<ResultSchemaOf<K>>;
/** The merged result of a modify or sync hook: `collect` fields become lists. */
export type MergedResult<K extends HookName> = {
  -readonly [F in keyof ResultOutput<K>]?: F extends keyof RulesOf<K>
    ? RulesOf<K>[F] extends { rule: "collect" }
      ? NonNullable<ResultOutput<K>[F]>[]
      : ResultOutput<K>[F]
    : ResultOutput<K>[F];
};

/** Which registration decided, and how (a handler's own decision or a failure under fail-closed). */
export interface Attribution {
  readonly hook: HookName;
  readonly pluginId: string;
  readonly registrationId?: string;
  readonly cause: "decision" | "threw" | "timeout" | "invalid" | "cancelled";
}

export interface ModifyOutcome<K extends HookName> {
  readonly result: MergedResult<K>;
  /** Set when a latch field was set: by a handler's result, or by a fail-closed failure. */
  readonly decidedBy?: Attribution;
  /** Set when a handler asked to end the run (the hook's `stopField`, e.g. `stopRun`). */
  readonly stoppedBy?: Attribution;
}

/** A gate's outcome. The handler's internal `reason` is dropped here: it never leaves the engine. */
export type GateOutcome =
  | { readonly outcome: "pass" }
  | { readonly outcome: "block"; readonly by: Attribution; readonly message?: string; readonly category?: string };

export type ClaimOutcome<K extends HookName> =
  | { readonly handled: false }
  | { readonly handled: true; readonly by: Attribution; readonly result: z.output<ResultSchemaOf<K>> };

type KindOf<K extends HookName> = Spec<K>["kind"];
export type DispatchResult<K extends HookName> =
  KindOf<K> extends "observe"
    ? Spec<K> extends { detached: true }
      ? undefined
      : Promise<void>
    : KindOf<K> extends "modify"
      ? Promise<ModifyOutcome<K>>
      : KindOf<K> extends "claim"
        ? Promise<ClaimOutcome<K>>
        : KindOf<K> extends "gate"
          ? Promise<GateOutcome>
          : ModifyOutcome<K>;
