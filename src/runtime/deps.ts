import type { LanguageModelV3 } from "@ai-sdk/provider";
import type { SecretMasker } from "../core/secret-values.js";
import type { HookEngine } from "../hooks/engine.js";
import type { ModelUsage } from "../models/collect.js";
import type { PermissionPolicy } from "../permissions/index.js";
import type { HostLogger } from "../plugins/host.js";
import type { StoreView } from "../store/types.js";
import type { Tool } from "../tools/types.js";
import type { Doors } from "./doors/outbox.js";
import type { SlashCommands } from "./slash.js";
import type { Approver } from "./types.js";

export interface CompactionConfig {
  /** Compact automatically when the history's estimated tokens exceed this. */
  readonly contextTokens: number;
  /** Messages kept verbatim after the summary. */
  readonly keepRecent: number;
}

/** gatehouse.json `model` settings: passed to every model call. */
export interface ModelSettings {
  /** Retries of a failed model call before anything streamed (default 2, as the AI SDK's). */
  readonly maxRetries: number;
  readonly temperature?: number;
  readonly maxOutputTokens?: number;
  /** OpenAI's `reasoningEffort`, Anthropic's `effort`. */
  readonly reasoningEffort?: "minimal" | "low" | "medium" | "high";
}

export interface RuntimeConfig {
  readonly cwd: string;
  readonly maxSteps: number;
  readonly systemPrompt: string;
  readonly compaction: CompactionConfig;
  readonly model: ModelSettings;
  /** How long an approval waits for an answer before it counts as a deny. */
  readonly approvalTimeoutMs: number;
}

/** A model chosen for a run, with the names hooks report. */
export interface ResolvedModel {
  readonly model: LanguageModelV3;
  readonly provider: string;
  readonly modelId: string;
}

export interface ModelResolver {
  /** The configured model, or the one a `before_model_resolve` override names. */
  resolve(override?: { modelOverride?: string; providerOverride?: string }): Promise<ResolvedModel>;
}

/** Everything a run needs, shared by all runs of one Gatehouse instance. */
export interface RuntimeDeps {
  readonly engine: HookEngine;
  /** The store as everything but the doors holds it: no method that stores message text. */
  readonly store: StoreView;
  /** The store's message writer, sealed: only the doors open it (src/runtime/doors/outbox.ts). */
  readonly doors: Doors;
  readonly models: ModelResolver;
  readonly tools: ReadonlyMap<string, Tool>;
  /** Resolves once tools that start in the background (MCP servers) joined `tools` or failed; rejects when the signal aborts first. */
  readonly waitForTools?: (signal: AbortSignal) => Promise<void>;
  readonly config: RuntimeConfig;
  readonly approver: Approver | undefined;
  readonly logger: HostLogger;
  readonly commands: SlashCommands;
  /** The permission rules and mode every tool call is checked against. */
  readonly permissions: PermissionPolicy;
  /** Sessions this instance has started or resumed: one it meets first that already existed is resumed. */
  readonly sessionsOpened: Set<string>;
  /** Variables hooks set for a session's later tool processes (Claude Code's `CLAUDE_ENV_FILE`). */
  readonly sessionEnv: ReadonlyMap<string, Readonly<Record<string, string>>>;
  /**
   * The values the environment policy withholds, masked in every tool output of a session before
   * the model, the store or a hook reads it (src/core/secret-values.ts): those of Gatehouse's own
   * environment and of the variables hooks set for the session.
   */
  readonly secretsOf: (sessionId: string) => SecretMasker;
  /**
   * Each run under way (by run id, until its record is written) and where its usage is counted: a
   * command hook's own model calls (`prompt`, `agent`) count in the run whose event fired it.
   */
  readonly runUsage: Map<string, (usage: ModelUsage) => void>;
}
