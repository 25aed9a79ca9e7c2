/** A problem in a settings file: the file, where in it, and what was expected. */
export interface SettingsDiagnostic {
  readonly level: "error" | "warning";
  /** The settings file, or `--settings` for inline JSON. */
  readonly file: string;
  /** Where in `file` (1-based), when known. */
  readonly line?: number;
  readonly column?: number;
  /** JSON path inside the file, e.g. `hooks.PreToolUse[0].hooks[1].timeout` or `permissions.allow[2]`. */
  readonly path: string;
  readonly message: string;
}
