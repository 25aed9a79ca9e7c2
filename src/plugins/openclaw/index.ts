import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { type AdaptedPlugin, adaptOpenClawPlugin } from "./adapter.js";
import { fallbackId, findManifest, hasOpenClawMarkers, resolveOpenClawExport } from "./module.js";

export { type AdaptedPlugin, adaptOpenClawPlugin } from "./adapter.js";
export { HOOK_MAPPINGS, type HookMapping } from "./hooks.js";
export { folderEntry, hasOpenClawMarkers, isOpenClawModule, resolveOpenClawExport } from "./module.js";
export { TOOL_MAPPINGS, type ToolMapping } from "./tools.js";

/** The SDK entry points OpenClaw plugins import, answered by Gatehouse's shim when `openclaw` is absent. */
export const OPENCLAW_SDK_SPECIFIERS = [
  "openclaw/plugin-sdk/plugin-entry",
  "openclaw/plugin-sdk/core",
  "openclaw/plugin-sdk",
];

/**
 * The shim's file. Built, it is an entry of its own (scripts/build.ts), dist/plugins/openclaw/sdk/,
 * while this module is bundled into dist/chunks/; from source it is the `.ts` beside this file.
 */
export function openClawSdkShim(): string {
  for (const candidate of ["../plugins/openclaw/sdk/plugin-entry.js", "./sdk/plugin-entry.js"]) {
    const file = fileURLToPath(new URL(candidate, import.meta.url));
    if (existsSync(file)) return file;
  }
  return fileURLToPath(new URL("./sdk/plugin-entry.ts", import.meta.url));
}

export interface LoadedOpenClawPlugin {
  readonly plugin: AdaptedPlugin;
  /** The entry's config after the manifest's `configSchema` (defaults applied). */
  readonly config: unknown;
}

export class OpenClawConfigError extends Error {}

/**
 * An imported module as a Gatehouse plugin, when it is an OpenClaw one: its manifest read, its
 * config checked against the manifest's `configSchema` (as OpenClaw checks
 * `plugins.entries.<id>.config`). Undefined when the module is not an OpenClaw plugin.
 */
export function loadOpenClawPlugin(
  mod: unknown,
  options: { readonly file: string; readonly root?: string; readonly cwd: string; readonly config: unknown },
): LoadedOpenClawPlugin | undefined {
  const entry = resolveOpenClawExport(mod, { bareFunction: hasOpenClawMarkers(options.file, options.root) });
  if (!entry) return undefined;
  const manifest = findManifest(options.file, options.root);
  let config = options.config;
  if (manifest?.configSchema && config !== undefined) {
    const parsed = z.fromJSONSchema(manifest.configSchema as Parameters<typeof z.fromJSONSchema>[0]).safeParse(config);
    if (!parsed.success) {
      const what = parsed.error.issues
        .map((i) => `config${i.path.map((p) => `.${String(p)}`).join("")}: ${i.message}`)
        .join("; ");
      throw new OpenClawConfigError(`${what} (per the configSchema in ${manifest.file})`);
    }
    config = parsed.data;
  }
  const plugin = adaptOpenClawPlugin({
    entry,
    ...(manifest ? { manifest } : {}),
    source: options.file,
    ...(options.root === undefined ? {} : { packageRoot: options.root }),
    fallbackId: fallbackId(options.file),
    cwd: options.cwd,
  });
  return { plugin, config };
}
