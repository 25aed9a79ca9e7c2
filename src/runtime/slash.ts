import { listingLines, permissionListing } from "../permissions/listing.js";
import type { PluginCommand } from "../plugins/define.js";
import { compact } from "./compaction.js";
import type { RuntimeDeps } from "./deps.js";
import type { RunState } from "./state.js";

export interface SlashContext {
  readonly deps: RuntimeDeps;
  readonly state: RunState;
  /** Replaces the session (for /reset); returns the new session id. */
  readonly resetSession: () => Promise<string>;
}

interface Command {
  readonly description: string;
  run(args: string, ctx: SlashContext): Promise<string | undefined>;
}

const BUILT_IN: Record<string, Command> = {
  help: {
    description: "list the slash commands",
    async run(_args, { deps }) {
      return ["Commands:", ...deps.commands.list().map(([name, description]) => `  /${name} — ${description}`)].join(
        "\n",
      );
    },
  },
  reset: {
    description: "start a new session (the old one stays in the store)",
    async run(_args, { resetSession }) {
      const id = await resetSession();
      return `Started a new session (${id}).`;
    },
  },
  compact: {
    description: "summarize the conversation so far to free context (optional: instructions)",
    async run(args, { deps, state }) {
      const result = await compact(deps, state, "manual", args || undefined);
      if (result.status === "nothing") return "Nothing to compact yet.";
      if (result.status === "blocked") {
        const why = result.message === undefined ? "." : `: ${result.message}`;
        return `Compaction was blocked by a policy (${result.pluginId})${why}`;
      }
      return `Compacted ${result.compactedCount} messages into a summary.`;
    },
  },
  permissions: {
    description: 'list the permission rules in force (with this session\'s "always" rules) and the mode',
    async run(_args, { deps, state }) {
      return listingLines(permissionListing(deps.permissions, deps.config.cwd, state.sessionId)).join("\n");
    },
  },
  status: {
    description: "show the session, the model and the history size",
    async run(_args, { state }) {
      return [
        `Session: ${state.sessionId}`,
        `Model: ${state.model.provider}:${state.model.modelId}`,
        `Messages in history: ${state.history.length}`,
      ].join("\n");
    },
  },
};

/**
 * Slash commands (docs/lifecycle.md, step 4): built-ins plus those plugins register. A prompt is a
 * command only when its first word names one; "/etc/hosts, explain" stays an ordinary prompt.
 */
export class SlashCommands {
  constructor(private readonly plugins: ReadonlyMap<string, PluginCommand>) {}

  parse(prompt: string): { readonly name: string; readonly args: string } | undefined {
    const match = /^\/([a-z][a-z0-9_-]*)(?:\s+([\s\S]*))?$/.exec(prompt.trim());
    if (!match) return undefined;
    const name = match[1] as string;
    return Object.hasOwn(BUILT_IN, name) || this.plugins.has(name) ? { name, args: match[2]?.trim() ?? "" } : undefined;
  }

  list(): [string, string][] {
    return [
      ...Object.entries(BUILT_IN).map(([n, c]): [string, string] => [n, c.description]),
      ...[...this.plugins].map(([n, c]): [string, string] => [n, c.description]),
    ];
  }

  async run(name: string, args: string, ctx: SlashContext): Promise<string | undefined> {
    const builtIn = BUILT_IN[name];
    if (builtIn) return builtIn.run(args, ctx);
    const command = this.plugins.get(name);
    return command ? command.run(args, { sessionId: ctx.state.sessionId, runId: ctx.state.runId }) : undefined;
  }
}
