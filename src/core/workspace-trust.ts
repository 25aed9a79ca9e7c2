/**
 * What a project's own files may not do until the user trusts the project (docs/trust.md): a
 * cloned repository's `.claude/settings.json` or `gatehouse.json` can tighten the policy at once
 * (deny and ask rules, a stricter mode, more unreadable paths), but whatever it loosens waits for
 * trust, as Claude Code holds a project's `permissions.allow` until its trust dialog is accepted.
 *
 * The functions here are pure: they return the settings without their loosening keys, and name
 * each key they dropped so `gatehouse trust` and the run's one-line notice can say what waits.
 */

/** One loosening setting held back: the key path and a short account of its value. */
export interface HeldSetting {
  /** `permissions.allow`, `sandbox.network.allowedDomains`, `plugins`… */
  readonly key: string;
  /** What it would grant: the rules, names or value, shortened. */
  readonly value: string;
  /** The whole value as JSON: what trust is recorded for. */
  readonly json: string;
}

export interface TrustGated<T> {
  /** The settings with every loosening key removed. */
  readonly settings: T;
  /** What was removed, in file order. */
  readonly held: readonly HeldSetting[];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Modes that run calls without asking; the others (default, plan, dontAsk) only restrict. */
const LOOSENING_MODES: ReadonlySet<unknown> = new Set(["acceptEdits", "bypassPermissions"]);

/**
 * The keys of Claude Code's `sandbox` block that only restrict, with the value that restricts
 * (`"any"`: every value). Every other key of the block (`enabled: false`, `excludedCommands`,
 * `allowUnsandboxedCommands`, `filesystem.allowWrite`, `network.allowedDomains`, keys added
 * later…) loosens or may, so it waits for trust: an unknown key is held, never passed through.
 */
const SANDBOX_TIGHTENING: Readonly<Record<string, unknown>> = {
  enabled: true,
  failIfUnavailable: true,
  autoAllowBashIfSandboxed: false,
  allowUnsandboxedCommands: false,
  "filesystem.denyRead": "any",
  "filesystem.denyWrite": "any",
  "network.deniedDomains": "any",
};

/**
 * A Claude Code settings file (`.claude/settings.json`, a tracked `.claude/settings.local.json`)
 * of a project not trusted: without `permissions.allow`, `permissions.additionalDirectories`, a
 * `permissions.defaultMode` that loosens (acceptEdits, bypassPermissions), and the `sandbox`
 * keys that loosen, and `enabledPlugins` and `extraKnownMarketplaces`. Deny and ask rules, hooks
 * and everything else stay.
 */
export function untrustedProjectSettings(settings: unknown): TrustGated<unknown> {
  if (!isObject(settings)) return { settings, held: [] };
  const held: HeldSetting[] = [];
  const out: Record<string, unknown> = { ...settings };
  if (isObject(settings.permissions)) out.permissions = gatePermissions(settings.permissions, "permissions", held);
  if (isObject(settings.sandbox)) out.sandbox = gateSandbox(settings.sandbox, "sandbox", held);
  else if (settings.sandbox !== undefined) {
    held.push(heldSetting("sandbox", settings.sandbox));
    delete out.sandbox;
  }
  // Claude Code plugins run their hooks and MCP servers: enabled (or disabled, a guard of the user's included) only once trusted.
  for (const key of ["enabledPlugins", "extraKnownMarketplaces"]) {
    if (settings[key] === undefined) continue;
    held.push({ ...heldSetting(key, settings[key]), value: names(settings[key]) });
    delete out[key];
  }
  return { settings: out, held };
}

/**
 * gatehouse.json found in an untrusted project: the Claude Code keys as in
 * `untrustedProjectSettings`, and Gatehouse's own loosening keys: `plugins` (code run in-process),
 * `mcpServers` (processes and remote servers), `tools.bash.passEnv` and `commandHooks.passEnv`
 * (secrets handed to processes), `tools.webFetch.allowPrivateNetwork`.
 */
export function untrustedGatehouseConfig<T extends object>(config: T): TrustGated<T> {
  const gated = untrustedProjectSettings(config);
  const held = [...gated.held];
  const out = gated.settings as Record<string, unknown>;
  for (const key of ["plugins", "mcpServers"]) {
    if (out[key] === undefined) continue;
    held.push({ ...heldSetting(key, out[key]), value: names(out[key]) });
    delete out[key];
  }
  const drop = (path: readonly string[]) => {
    const parents: Record<string, unknown>[] = [out];
    for (const part of path.slice(0, -1)) {
      const next = (parents.at(-1) as Record<string, unknown>)[part];
      if (!isObject(next)) return;
      parents.push(next);
    }
    const last = path.at(-1) as string;
    const owner = parents.at(-1) as Record<string, unknown>;
    if (owner[last] === undefined || (path.join(".") === "tools.webFetch.allowPrivateNetwork" && owner[last] !== true))
      return;
    held.push(heldSetting(path.join("."), owner[last]));
    // Copy each object on the way so the caller's config is left as it was.
    let copy = out;
    for (const part of path.slice(0, -1)) {
      copy[part] = { ...(copy[part] as Record<string, unknown>) };
      copy = copy[part] as Record<string, unknown>;
    }
    delete copy[last];
  };
  drop(["tools", "bash", "passEnv"]);
  drop(["commandHooks", "passEnv"]);
  drop(["tools", "webFetch", "allowPrivateNetwork"]);
  return { settings: out as T, held };
}

function gatePermissions(block: Record<string, unknown>, at: string, held: HeldSetting[]): Record<string, unknown> {
  const out = { ...block };
  for (const key of ["allow", "additionalDirectories"]) {
    if (block[key] === undefined) continue;
    held.push(heldSetting(`${at}.${key}`, block[key]));
    delete out[key];
  }
  // A mode that is not one is left for the loader to report.
  if (LOOSENING_MODES.has(block.defaultMode)) {
    held.push(heldSetting(`${at}.defaultMode`, block.defaultMode));
    delete out.defaultMode;
  }
  return out;
}

function gateSandbox(block: Record<string, unknown>, at: string, held: HeldSetting[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(block)) {
    if (isObject(value) && (key === "filesystem" || key === "network")) {
      const inner: Record<string, unknown> = {};
      for (const [sub, subValue] of Object.entries(value)) {
        if (tightens(`${key}.${sub}`, subValue)) inner[sub] = subValue;
        else held.push(heldSetting(`${at}.${key}.${sub}`, subValue));
      }
      if (Object.keys(inner).length > 0) out[key] = inner;
    } else if (tightens(key, value)) out[key] = value;
    else held.push(heldSetting(`${at}.${key}`, value));
  }
  return out;
}

function heldSetting(key: string, value: unknown): HeldSetting {
  return { key, value: shorten(value), json: JSON.stringify(value) ?? "null" };
}

function tightens(key: string, value: unknown): boolean {
  const expected = SANDBOX_TIGHTENING[key];
  return expected === "any" || (expected !== undefined && value === expected);
}

function names(value: unknown): string {
  if (Array.isArray(value))
    return value.map((e) => (isObject(e) ? String(e.path ?? e.package ?? e.name ?? "?") : String(e))).join(", ");
  if (isObject(value)) return Object.keys(value).join(", ");
  return shorten(value);
}

function shorten(value: unknown): string {
  const text = Array.isArray(value)
    ? value.map((v) => (typeof v === "string" ? v : JSON.stringify(v))).join(", ")
    : typeof value === "string"
      ? value
      : JSON.stringify(value);
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}
