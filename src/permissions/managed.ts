import { readdirSync } from "node:fs";
import { join } from "node:path";

/** Claude Code's managed settings directory on this platform. */
function managedDir(): string | undefined {
  if (process.platform === "linux") return "/etc/claude-code";
  if (process.platform === "darwin") return "/Library/Application Support/ClaudeCode";
  return undefined;
}

/**
 * The managed settings files, in the order they apply: the one file `named` (the option, else
 * `GATEHOUSE_MANAGED_SETTINGS`), or Claude Code's `managed-settings.json` and then
 * `managed-settings.d/*.json` in alphabetical order. `null` reads none. Missing files are left to
 * the reader. Command hooks and permission rules read the same list.
 */
export function managedSettingsFiles(
  named: string | null | undefined,
  env: Readonly<Record<string, string | undefined>> = process.env,
): string[] {
  const file = named === undefined ? env.GATEHOUSE_MANAGED_SETTINGS : named;
  if (file === null) return [];
  if (file !== undefined && file !== "") return [file];
  const dir = managedDir();
  if (dir === undefined) return [];
  const files = [join(dir, "managed-settings.json")];
  try {
    const dropIns = readdirSync(join(dir, "managed-settings.d")).filter((f) => f.endsWith(".json"));
    files.push(...dropIns.sort().map((f) => join(dir, "managed-settings.d", f)));
  } catch {
    // No drop-in folder.
  }
  return files;
}
