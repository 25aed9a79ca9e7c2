import { readFile } from "node:fs/promises";
import { isAbsolute, relative, resolve } from "node:path";
import { jsonErrorText, locateJsonPath, parseJsonText } from "../core/json.js";
import { type ConfigProblem, describeIssues } from "./issues.js";
import { configJsonSchema, type GatehouseConfig, GatehouseConfigSchema } from "./schema.js";

export const CONFIG_FILE = "gatehouse.json";
/** A config file to use instead of `<cwd>/gatehouse.json`; `--config` wins over it. */
export const CONFIG_ENV = "GATEHOUSE_CONFIG";

/**
 * gatehouse.json cannot be used. The message names the file and, per problem, the JSON path
 * and what was expected, one problem a line, with the line and column when read from a file:
 * `gatehouse.json:12:9: plugins[0].hooks.timeoutMs: expected a whole number of milliseconds from 1 to 600000, got 0`.
 */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
  constructor(
    message: string,
    /** The file, as an absolute path. */
    readonly file: string,
    readonly problems: readonly ConfigProblem[] = [],
  ) {
    super(message);
  }
}

export interface LoadConfigOptions {
  /** The project directory: where gatehouse.json is looked for and `file` is resolved. */
  readonly cwd: string;
  /** `--config FILE`: must exist. */
  readonly file?: string;
  /** Read for `GATEHOUSE_CONFIG`. Default: none (only `file` and `<cwd>/gatehouse.json` count). */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

export interface LoadedConfig {
  readonly config: GatehouseConfig;
  /** The absolute path of the file read; absent when there was none. */
  readonly file?: string;
}

/**
 * Reads and validates the project's configuration: `file` if given, else `GATEHOUSE_CONFIG`,
 * else `<cwd>/gatehouse.json`. Only the last may be missing (an empty config). Throws `ConfigError`.
 */
export async function loadConfig(options: LoadConfigOptions): Promise<LoadedConfig> {
  const named = options.file ?? (options.env?.[CONFIG_ENV] || undefined);
  const file = resolve(options.cwd, named ?? CONFIG_FILE);
  const label = displayPath(options.cwd, file);
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" && named === undefined) return { config: {} };
    const why =
      code === "ENOENT"
        ? "no such file"
        : code === "EISDIR"
          ? "is a directory, not a file"
          : `cannot be read (${code ?? String(error)})`;
    const via = options.file === undefined && named !== undefined ? ` (from ${CONFIG_ENV})` : "";
    throw new ConfigError(`${label}${via}: ${why}`, file);
  }
  return { config: parseConfigText(text, file, label), file };
}

/**
 * Validates configuration text; `label` is how messages name the file (default: the path as
 * given). Each problem also gives the line and column of what it is about.
 */
export function parseConfigText(text: string, file: string, label: string = file): GatehouseConfig {
  const parsed = parseJsonText(text);
  if (!parsed.ok) {
    const { line, column } = parsed.error;
    throw new ConfigError(`${label}:${line}:${column}: ${jsonErrorText(parsed.error)}`, file);
  }
  return validate(parsed.value, file, label, text);
}

/** Validates an already parsed configuration value. */
export function parseConfig(value: unknown, file: string, label: string = file): GatehouseConfig {
  return validate(value, file, label, undefined);
}

function validate(value: unknown, file: string, label: string, text: string | undefined): GatehouseConfig {
  const result = GatehouseConfigSchema.safeParse(value, { reportInput: true });
  if (result.success) return result.data;
  const problems = describeIssues(result.error.issues, configJsonSchema()).map(({ at, ...problem }): ConfigProblem => {
    const position = text === undefined ? undefined : locateJsonPath(text, at);
    return position === undefined ? problem : { ...problem, ...position };
  });
  const lines = problems.map((p) => {
    const where = p.line === undefined ? label : `${label}:${p.line}:${p.column}`;
    return `${where}: ${p.path === "" ? "(top level)" : p.path}: ${p.message}`;
  });
  throw new ConfigError(lines.join("\n"), file, problems);
}

/** Relative to `cwd` when the file is inside it (`gatehouse.json`), else absolute. */
export function displayPath(cwd: string, file: string): string {
  const rel = relative(cwd, file);
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel) ? rel : file;
}
