import { parse, TomlError } from "smol-toml";
import { type Diagnostic, readSettingsText } from "./diagnostics.js";

/**
 * Codex's inline hooks: the `[hooks]` tables of `config.toml`, the same vocabulary as its
 * hooks.json (`[[hooks.PreToolUse]]` is one matcher group, `[[hooks.PreToolUse.hooks]]` one
 * handler). `[hooks.state]` is where Codex records per-hook trust; it is not an event. The rest
 * of config.toml is Codex's own configuration and is not read.
 */

/** config.toml as the root a hooks.json would have (`{ hooks }`), undefined when the file does not exist. */
export function readCodexToml(file: string, diagnostics: Diagnostic[]): unknown {
  const text = readSettingsText(file, diagnostics);
  if (text === undefined) return undefined;
  let root: Record<string, unknown>;
  try {
    root = parse(text) as Record<string, unknown>;
  } catch (e) {
    if (!(e instanceof TomlError)) throw e;
    const message = e.message.split("\n")[0] ?? "invalid TOML";
    diagnostics.push({ level: "error", file, line: e.line, column: e.column, path: "", message });
    return undefined;
  }
  const hooks = root.hooks;
  if (hooks === undefined) return {};
  if (typeof hooks !== "object" || hooks === null || Array.isArray(hooks)) return { hooks };
  const { state: _trust, ...events } = hooks as Record<string, unknown>;
  return { hooks: events };
}

/**
 * The line of a diagnostic's path in config.toml: `hooks.<Event>[g].hooks[h]…` is the h-th
 * `[[hooks.<Event>.hooks]]` header after the g-th `[[hooks.<Event>]]` one (inline tables and
 * arrays resolve to the nearest header that holds them).
 */
export function tomlPosition(text: string, path: string): { line: number; column: number } | undefined {
  const match = /^hooks\.([^.[]+)(?:\[(\d+)\](?:\.hooks\[(\d+)\])?)?/.exec(path);
  if (!match) return undefined;
  const [, event, group, handler] = match as unknown as [string, string, string | undefined, string | undefined];
  const lines = text.split("\n");
  const escaped = event.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const eventHeader = new RegExp(`^\\s*\\[\\[?\\s*hooks\\s*\\.\\s*"?${escaped}"?\\s*\\]\\]?\\s*(#.*)?$`);
  const handlerHeader = new RegExp(`^\\s*\\[\\[\\s*hooks\\s*\\.\\s*"?${escaped}"?\\s*\\.\\s*hooks\\s*\\]\\]`);
  const assignment = new RegExp(`^\\s*"?${escaped}"?\\s*=`);
  let seen = -1;
  let at: number | undefined;
  for (const [i, line] of lines.entries()) {
    if (eventHeader.test(line) || assignment.test(line)) {
      seen++;
      if (group === undefined || seen === Number(group)) {
        at = i;
        break;
      }
    }
  }
  if (at === undefined) return undefined;
  if (handler !== undefined) {
    let handlers = -1;
    for (let i = at + 1; i < lines.length; i++) {
      if (eventHeader.test(lines[i] as string)) break;
      if (handlerHeader.test(lines[i] as string) && ++handlers === Number(handler)) return { line: i + 1, column: 1 };
    }
  }
  return { line: at + 1, column: 1 };
}
