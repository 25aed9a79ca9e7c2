import type { z } from "zod";

/** One thing wrong with a configuration file: where (a JSON path) and what was expected. */
export interface ConfigProblem {
  /** `plugins[0].hooks.timeouts.before_tool_call`; empty for the top level. */
  readonly path: string;
  readonly message: string;
  /**
   * Where in the file (1-based) the property or element the problem is about is written, or
   * for a missing one, its nearest enclosing value. Absent when validating a parsed value.
   */
  readonly line?: number;
  readonly column?: number;
}

/** A problem with its JSON path as keys, to find it in the text. */
export interface IssueProblem extends ConfigProblem {
  readonly at: (string | number)[];
}

type JsonSchema = Readonly<Record<string, unknown>>;

/** `plugins[0].hooks`, `mcpServers["my.server"]`; an empty path stays empty. */
export function formatJsonPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(String(key))) out += out === "" ? String(key) : `.${String(key)}`;
    else out += `[${JSON.stringify(String(key))}]`;
  }
  return out;
}

/**
 * Turns zod issues into problems that say what was expected, in words taken from the JSON
 * Schema of the same zod schema (so `exclusiveMinimum: 0` on an integer reads "from 1").
 * Refinement messages are kept as they are.
 */
export function describeIssues(issues: readonly z.core.$ZodIssue[], root: JsonSchema): IssueProblem[] {
  const seen = new Set<string>();
  const problems: IssueProblem[] = [];
  const add = (path: readonly PropertyKey[], message: string) => {
    const at = path.map((key) => (typeof key === "number" ? key : String(key)));
    const p = { path: formatJsonPath(path), message, at };
    const key = `${p.path}\0${p.message}`;
    if (!seen.has(key)) {
      seen.add(key);
      problems.push(p);
    }
  };
  for (const issue of flattenUnions(issues)) {
    const node = schemaAt(root, issue.path);
    if (issue.code === "unrecognized_keys") {
      const known = node ? knownKeys(root, node) : [];
      for (const key of issue.keys) add([...issue.path, key], unknownKey(key, known));
      continue;
    }
    // A pattern's own message says what it wants ("must be an identifier: …"); the type alone would not.
    if (issue.code === "custom" || issue.code === "invalid_format" || node === undefined) {
      add(issue.path, issue.message);
      continue;
    }
    const expected = expectation(root, node, unitOf(issue.path));
    if (expected === undefined) {
      add(issue.path, issue.message);
      continue;
    }
    const got = shown(issue);
    add(issue.path, `expected ${expected}${got === undefined ? "" : `, got ${got}`}${suggestion(issue)}`);
  }
  return problems;
}

/**
 * A union's own issue says only "invalid input". When the value has the type of exactly one
 * branch (an array where `true` or an array is accepted), that branch's issues say more.
 */
function flattenUnions(issues: readonly z.core.$ZodIssue[]): z.core.$ZodIssue[] {
  return issues.flatMap((issue) => {
    if (issue.code !== "invalid_union") return [issue];
    const typed = issue.errors.filter(
      (branch) => !branch.every((i) => i.code === "invalid_type" && i.path.length === 0),
    );
    const [only] = typed;
    if (typed.length !== 1 || only === undefined) return [issue];
    return flattenUnions(only.map((i) => ({ ...i, path: [...issue.path, ...i.path] }) as z.core.$ZodIssue));
  });
}

/** `; did you mean "before_tool_call"?` for a near miss among an enum's values. */
function suggestion(issue: z.core.$ZodIssue): string {
  if (issue.code !== "invalid_value" || !("input" in issue) || typeof issue.input !== "string") return "";
  const near = closest(
    issue.input,
    issue.values.filter((v): v is string => typeof v === "string"),
  );
  return near === undefined ? "" : `; did you mean "${near}"?`;
}

/** The subschema that validates the value at `path`, if the path can be followed. */
function schemaAt(root: JsonSchema, path: readonly PropertyKey[]): JsonSchema | undefined {
  let node: JsonSchema | undefined = root;
  for (const key of path) {
    if (node === undefined) return undefined;
    node = child(root, node, key);
  }
  return node === undefined ? undefined : deref(root, node);
}

function child(root: JsonSchema, node: JsonSchema, key: PropertyKey): JsonSchema | undefined {
  const n = deref(root, node);
  const branches = n.anyOf ?? n.oneOf;
  if (Array.isArray(branches)) {
    for (const b of branches as JsonSchema[]) {
      const found = child(root, b, key);
      if (found) return found;
    }
    return undefined;
  }
  if (typeof key === "number") return isSchema(n.items) ? n.items : undefined;
  const props = n.properties as Record<string, JsonSchema> | undefined;
  if (props && Object.hasOwn(props, key)) return props[String(key)];
  return isSchema(n.additionalProperties) ? n.additionalProperties : undefined;
}

function isSchema(v: unknown): v is JsonSchema {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function deref(root: JsonSchema, node: JsonSchema): JsonSchema {
  const ref = node.$ref;
  if (typeof ref !== "string" || !ref.startsWith("#")) return node;
  let target: unknown = root;
  for (const part of ref.slice(2).split("/").filter(Boolean)) {
    target = isSchema(target) ? target[part.replace(/~1/g, "/").replace(/~0/g, "~")] : undefined;
  }
  return isSchema(target) ? target : node;
}

/** Milliseconds for `…Ms` keys and the entries of a `timeouts` map. */
function unitOf(path: readonly PropertyKey[]): string {
  const last = path.at(-1);
  const parent = path.at(-2);
  return (typeof last === "string" && /Ms$/.test(last)) || parent === "timeouts" ? " of milliseconds" : "";
}

/** "a whole number of milliseconds from 1 to 600000", "one of \"a\", \"b\"", … */
function expectation(root: JsonSchema, raw: JsonSchema, unit = ""): string | undefined {
  const node = deref(root, raw);
  const branches = node.anyOf ?? node.oneOf;
  if (Array.isArray(branches)) {
    const parts = (branches as JsonSchema[]).map((b) => expectation(root, b, unit));
    return parts.every((p) => p !== undefined) ? parts.join(", or ") : undefined;
  }
  if (Array.isArray(node.enum)) return oneOf(node.enum);
  if ("const" in node) return JSON.stringify(node.const);
  switch (node.type) {
    case "integer":
    case "number":
      return `${node.type === "integer" ? "a whole number" : "a number"}${unit}${range(node)}`;
    case "string":
      return typeof node.minLength === "number" && node.minLength > 0 ? "a non-empty string" : "a string";
    case "boolean":
      return "true or false";
    case "array":
      return "an array";
    case "object":
      return "an object";
    case "null":
      return "null";
    default:
      return undefined;
  }
}

function range(node: JsonSchema): string {
  const step = node.type === "integer" ? 1 : 0;
  const num = (v: unknown) => (typeof v === "number" ? v : undefined);
  const exMin = num(node.exclusiveMinimum);
  const exMax = num(node.exclusiveMaximum);
  // zod's `.int()` adds the safe-integer bounds: true, but noise in a message.
  const bound = (v: unknown) => (typeof v === "number" && Math.abs(v) < Number.MAX_SAFE_INTEGER ? v : undefined);
  const min = bound(node.minimum) ?? (exMin !== undefined && step ? exMin + step : undefined);
  const max = bound(node.maximum) ?? (exMax !== undefined && step ? exMax - step : undefined);
  if (min !== undefined && max !== undefined) return ` from ${min} to ${max}`;
  if (min !== undefined) return ` of at least ${min}`;
  if (exMin !== undefined) return ` greater than ${exMin}`;
  if (max !== undefined) return ` of at most ${max}`;
  if (exMax !== undefined) return ` less than ${exMax}`;
  return "";
}

const LISTED = 8;

function oneOf(values: readonly unknown[]): string {
  const quoted = values.map((v) => JSON.stringify(v));
  if (quoted.length <= LISTED) return `one of ${quoted.join(", ")}`;
  return `one of ${quoted.slice(0, 3).join(", ")}, … (${quoted.length} names)`;
}

/**
 * What was found instead, when it helps: numbers and literals as they are, a short string for a
 * wrong choice, otherwise the kind of value only (a string may be a secret, as in `headers`).
 */
function shown(issue: z.core.$ZodIssue): string | undefined {
  if (!("input" in issue) || issue.input === undefined) return undefined;
  const { input } = issue;
  const literal = input === null || typeof input === "number" || typeof input === "boolean";
  switch (issue.code) {
    case "invalid_type":
    case "invalid_union":
      if (literal) return String(input);
      if (typeof input === "string") return "a string";
      return Array.isArray(input) ? "an array" : typeof input === "object" ? "an object" : typeof input;
    case "too_small":
    case "too_big":
      return typeof input === "number" ? String(input) : undefined;
    case "invalid_value":
      if (literal) return String(input);
      return typeof input === "string" && input.length <= 40 && !/\p{Cc}/u.test(input)
        ? JSON.stringify(input)
        : undefined;
    default:
      return undefined;
  }
}

function knownKeys(root: JsonSchema, node: JsonSchema): string[] {
  const n = deref(root, node);
  const names = isSchema(n.propertyNames) ? deref(root, n.propertyNames).enum : undefined;
  if (Array.isArray(names)) return names.map(String);
  return Object.keys((n.properties as Record<string, unknown> | undefined) ?? {});
}

function unknownKey(key: string, known: readonly string[]): string {
  const near = closest(key, known);
  if (near !== undefined) return `unknown key; did you mean "${near}"?`;
  if (known.length > 0 && known.length <= 16) return `unknown key; expected one of ${known.join(", ")}`;
  return "unknown key";
}

/** The known name within a small edit distance of `word` (case ignored), or the only one it begins. */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  const lower = word.toLowerCase();
  const extending = candidates.filter((c) => lower.length >= 4 && c.toLowerCase().startsWith(lower));
  if (extending.length === 1) return extending[0];
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(word.length / 3)) + 1;
  for (const c of candidates) {
    const d = distance(word.toLowerCase(), c.toLowerCase());
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}

function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min((prev[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost);
    }
    prev = row;
  }
  return prev[b.length] ?? 0;
}
