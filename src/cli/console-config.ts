// The configuration the web console shows (GET /v1/config): built with the very functions
// `gatehouse plugins inspect`, `gatehouse hooks list` and `gatehouse config` print with, so it
// lists the same things and masks secrets exactly as they do. Loaded by serve-run.ts only.

import { permissionListing } from "../permissions/listing.js";
import type { Gatehouse } from "../runtime/gatehouse.js";
import type { ConfigurationReport } from "../server/index.js";
import type { StoreOptions } from "../store/index.js";
import { projectConfiguration } from "./config.js";
import { shownPath } from "./format.js";
import { describeHandler, inRunOrder } from "./hooks.js";
import { buildReport } from "./plugins.js";
import type { CommandIO, ProjectFlags } from "./project.js";
import type { PreparedGatehouse } from "./run.js";

/** Permission rules with their sources and the mode, as `gatehouse permissions --json` lists them. */
export function permissionRules(
  prepared: PreparedGatehouse,
  io: Pick<CommandIO, "cwd">,
): ConfigurationReport["permissions"] {
  const listing = permissionListing(prepared.permissions, io.cwd);
  const from = listing.modeFrom === "default" ? "the default" : `from ${listing.modeFrom}`;
  const none = listing.rules.length === 0 ? "no rules; " : "";
  return { rules: listing.rules, note: `${none}mode ${listing.mode} (${from})` };
}

export async function describeConfiguration(
  prepared: PreparedGatehouse,
  gatehouse: Gatehouse,
  store: StoreOptions,
  flags: ProjectFlags,
  io: Pick<CommandIO, "cwd" | "env">,
): Promise<ConfigurationReport> {
  const [catalog, commandHooks, secrets] = await Promise.all([
    import("../hooks/catalog.js"),
    import("../command-hooks/index.js"),
    import("../core/secrets.js"),
  ]);
  const project = {
    config: prepared.config,
    settings: prepared.settings,
    trust: prepared.trust,
    ...(prepared.file === undefined ? {} : { file: prepared.file }),
  };
  const report = buildReport(prepared.settings.pluginEntries, gatehouse, [], catalog.HOOK_NAMES, (f) =>
    shownPath(io.cwd, f),
  );
  const handlers = inRunOrder(prepared.commandHooks.handlers ?? [], commandHooks.COMMAND_HOOK_EVENTS);
  return {
    plugins: report.plugins.map((p) => ({ ...p })),
    pluginProblems: [...report.diagnostics],
    commandHooks: handlers.map((h) => describeHandler(secrets, io.cwd, h)),
    permissions: permissionRules(prepared, io),
    settings: await projectConfiguration(project, store, flags, io),
  };
}
