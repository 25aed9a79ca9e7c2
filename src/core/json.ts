import type { Node, ParseError, ParseErrorCode } from "jsonc-parser";
import { lazyRequire } from "./lazy-require.js";

/**
 * jsonc-parser, loaded on first use: it is needed only when `JSON.parse` fails or a config
 * problem is located, so reading a valid file (or none) does not pay for loading it.
 */
const jsonc = lazyRequire<typeof import("jsonc-parser")>("jsonc-parser");

/**
 * JSON text as users write it in config files: `JSON.parse` decides what is valid (so exactly
 * what it accepts is accepted), and on failure jsonc-parser finds where the first error is,
 * since V8's messages give a position only sometimes and quote the input when they do.
 * Messages are our own words and show at most one character of the input: config values may
 * be secrets.
 */

/** 1-based, as an editor shows them: a leading BOM is not a character, a tab is one column. */
export interface JsonPosition {
  readonly line: number;
  readonly column: number;
}

export interface JsonSyntaxError extends JsonPosition {
  readonly message: string;
  /** Set when the text is valid JSON but an object names this key twice (the position is the second one). */
  readonly duplicateKey?: string;
}

export type JsonParseResult = { ok: true; value: unknown } | { ok: false; error: JsonSyntaxError };

/**
 * Parses `text` (a leading BOM allowed); a syntax error is returned, never thrown. So is a key
 * that appears twice in one object: `JSON.parse` keeps the last and drops the first without a
 * word, and a policy file that says two things (`"tools": {"deny": ["Bash"]}, "tools": {}`)
 * must not have one of them silently win.
 */
export function parseJsonText(text: string): JsonParseResult {
  const body = withoutBom(text);
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    const found = firstError(body) ?? { offset: 0, message: "not valid JSON" };
    return { ok: false, error: { ...positionAt(body, found.offset), message: found.message } };
  }
  const duplicate = typeof value === "object" && value !== null ? firstDuplicateKey(body) : undefined;
  if (duplicate === undefined) return { ok: true, value };
  const first = positionAt(body, duplicate.firstOffset);
  const where = duplicate.path === "" ? "" : ` in ${duplicate.path}`;
  return {
    ok: false,
    error: {
      ...positionAt(body, duplicate.offset),
      message: `duplicate key ${JSON.stringify(duplicate.key)}${where} (first at line ${first.line}, column ${first.column}); a key may appear only once`,
      duplicateKey: duplicate.key,
    },
  };
}

/** How a parse error reads after `file:line:column: `. */
export function jsonErrorText(error: JsonSyntaxError): string {
  return error.duplicateKey === undefined ? `invalid JSON: ${error.message}` : error.message;
}

interface Duplicate {
  readonly key: string;
  readonly offset: number;
  readonly firstOffset: number;
  /** The object's path, as in `hooks.PreToolUse[0]`; empty for the top level. */
  readonly path: string;
}

type Frame = { kind: "object"; keys: Map<string, number>; current?: string } | { kind: "array"; index: number };

/** The first key that appears twice in one object of valid JSON `text`, by jsonc-parser's visitor. */
function firstDuplicateKey(text: string): Duplicate | undefined {
  const frames: Frame[] = [];
  const path = () =>
    frames
      .slice(0, -1)
      .map((f) => (f.kind === "array" ? `[${f.index}]` : `.${f.current ?? ""}`))
      .join("")
      .replace(/^\./, "");
  let found: Duplicate | undefined;
  try {
    jsonc().visit(
      text,
      {
        onObjectBegin: () => {
          frames.push({ kind: "object", keys: new Map() });
        },
        onArrayBegin: () => {
          frames.push({ kind: "array", index: 0 });
        },
        onObjectEnd: () => {
          frames.pop();
        },
        onArrayEnd: () => {
          frames.pop();
        },
        onSeparator: (character) => {
          const top = frames.at(-1);
          if (character === "," && top?.kind === "array") top.index++;
        },
        onObjectProperty: (key, offset) => {
          const top = frames.at(-1);
          if (top?.kind !== "object") return;
          const firstOffset = top.keys.get(key);
          if (firstOffset !== undefined) {
            found = { key, offset, firstOffset, path: path() };
            throw STOP;
          }
          top.keys.set(key, offset);
          top.current = key;
        },
      },
      STRICT,
    );
  } catch (error) {
    if (error !== STOP) return undefined; // nested too deeply for jsonc-parser's recursion
  }
  return found;
}

/**
 * Where the value at `path` (as in `plugins[0].hooks`) is written in valid JSON `text`: the
 * start of its property name, or of the array element. When the path does not exist (a
 * missing property), the deepest part of it that does. Undefined when `text` is not valid JSON.
 */
export function locateJsonPath(text: string, path: readonly (string | number)[]): JsonPosition | undefined {
  const body = withoutBom(text);
  const errors: ParseError[] = [];
  let node: Node | undefined;
  const { parseTree } = jsonc();
  try {
    node = parseTree(body, errors, STRICT);
  } catch {
    return undefined; // nested too deeply for jsonc-parser's recursive descent
  }
  if (node === undefined || errors.length > 0) return undefined;
  for (const segment of path) {
    const child = childAt(node, segment);
    if (child === undefined) break;
    node = child;
  }
  const at = node.parent?.type === "property" ? node.parent : node;
  return positionAt(body, at.offset);
}

/**
 * `findNodeAtLocation` for one step, except that of duplicate property names the last wins,
 * as in `JSON.parse` (jsonc-parser's own lookup takes the first).
 */
function childAt(node: Node, segment: string | number): Node | undefined {
  if (node.type === "object" && typeof segment === "string") {
    const property = node.children?.findLast((p) => p.children?.[0]?.value === segment);
    return property?.children?.[1];
  }
  return node.type === "array" && typeof segment === "number" ? jsonc().findNodeAtLocation(node, [segment]) : undefined;
}

const STRICT = { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false } as const;

function withoutBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** Line breaks as jsonc-parser and editors count them: `\r\n`, `\n` or a lone `\r`. */
function positionAt(text: string, offset: number): JsonPosition {
  let line = 1;
  let start = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    const c = text[i];
    if (c === "\n" || (c === "\r" && text[i + 1] !== "\n")) {
      line++;
      start = i + 1;
    }
  }
  return { line, column: offset - start + 1 };
}

interface Found {
  readonly offset: number;
  readonly message: string;
}

/** What the parser was reading when it stopped: decides how an error is put into words. */
interface Context {
  /** The open objects and arrays, innermost last. */
  readonly open: ("object" | "array")[];
  expect: "value" | "key" | "colon" | "next" | "end";
  /** Where the comma just read is; undefined once anything else was read. */
  comma: number | undefined;
}

const STOP = Symbol("stop");

/** The first syntax error jsonc-parser reports, or undefined when it reports none. */
function firstError(text: string): Found | undefined {
  const cx: Context = { open: [], expect: "value", comma: undefined };
  const read = (expect: Context["expect"]) => {
    cx.expect = expect;
    cx.comma = undefined;
  };
  const afterValue = () => read(cx.open.length === 0 ? "end" : "next");
  let found: Found | undefined;
  const { visit } = jsonc();
  try {
    visit(
      text,
      {
        onObjectBegin: () => {
          cx.open.push("object");
          read("key");
        },
        onArrayBegin: () => {
          cx.open.push("array");
          read("value");
        },
        onObjectEnd: () => {
          cx.open.pop();
          afterValue();
        },
        onArrayEnd: () => {
          cx.open.pop();
          afterValue();
        },
        onObjectProperty: () => read("colon"),
        onLiteralValue: afterValue,
        onSeparator: (character, offset) => {
          read(character === ":" || cx.open.at(-1) === "array" ? "value" : "key");
          if (character === ",") cx.comma = offset;
        },
        onError: (code, offset, length) => {
          found = describe(text, code, offset, length, cx);
          throw STOP;
        },
      },
      STRICT,
    );
  } catch (error) {
    if (error !== STOP) return undefined; // e.g. a RangeError: nested too deeply to recurse
  }
  return found;
}

function describe(text: string, code: ParseErrorCode, offset: number, length: number, cx: Context): Found {
  const at = (message: string): Found => ({ offset, message });
  const unexpected = offset >= text.length ? "unexpected end of file" : `unexpected character ${shown(text, offset)}`;
  const char = text[offset];
  switch (jsonc().printParseErrorCode(code)) {
    case "InvalidCommentToken":
    case "UnexpectedEndOfComment":
      return at("comments are not allowed in JSON");
    // The scanner reports a bad string or number before the parser sees it out of place.
    case "UnexpectedEndOfString":
    case "InvalidUnicode":
    case "InvalidEscapeCharacter":
    case "InvalidCharacter":
      return cx.expect === "value" || cx.expect === "key"
        ? stringError(text, offset, length)
        : at(`${unexpected}${next(cx)}`);
    case "UnexpectedEndOfNumber":
    case "InvalidNumberFormat":
      return at(cx.expect === "value" ? "invalid number" : `${unexpected}${next(cx)}`);
    case "PropertyNameExpected":
    case "ValueExpected":
      if (cx.comma !== undefined && (char === "}" || char === "]"))
        return { offset: cx.comma, message: `trailing comma in ${char === "}" ? "an object" : "an array"}` };
      return at(`${unexpected}${next(cx)}`);
    case "ColonExpected":
      return at(`${unexpected}; expected ':' after the property name`);
    case "CommaExpected":
      return at(`${unexpected}${next(cx)}`);
    case "CloseBraceExpected":
      return at(`${unexpected}; expected ',' or '}' in an object`);
    case "CloseBracketExpected":
      return at(`${unexpected}; expected ',' or ']' in an array`);
    case "EndOfFileExpected":
      return at(`${unexpected} after the end of the JSON value`);
    case "InvalidSymbol":
      if (cx.expect === "key" && (char === "'" || /[A-Za-z_$]/.test(char ?? "")))
        return at("property names must be in double quotes");
      if (cx.expect === "value" && char === "'") return at("strings must be in double quotes");
      if (cx.expect === "value" && char === "-") return at("invalid number");
      return at(`${unexpected}${next(cx)}`);
    default:
      return at("not valid JSON");
  }
}

/** What the parser wanted at this point, as the end of an "unexpected …" message. */
function next(cx: Context): string {
  switch (cx.expect) {
    case "value":
      return "; expected a value";
    case "key":
      return "; expected a property name in double quotes";
    case "colon":
      return "; expected ':' after the property name";
    case "next":
      return cx.open.at(-1) === "object" ? "; expected ',' or '}' in an object" : "; expected ',' or ']' in an array";
    case "end":
      return " after the end of the JSON value";
  }
}

/**
 * jsonc-parser reports a bad string at its opening quote; the error is the first bad escape
 * or raw control character in it, or the line break or end of file that cut it short.
 */
function stringError(text: string, offset: number, length: number): Found {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: raw control characters are what it looks for
  const token = /\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})|[\\\u0000-\u001f]/g;
  token.lastIndex = offset + 1;
  const end = offset + length;
  for (let m = token.exec(text); m !== null && m.index < end; m = token.exec(text)) {
    if (m[0].length > 1) continue; // a valid escape
    const i = m.index;
    const c = text.charCodeAt(i);
    if (c === 0x5c) {
      if (i + 1 >= text.length) break;
      return { offset: i, message: text[i + 1] === "u" ? "invalid \\u escape" : "invalid escape in a string" };
    }
    if (c === 0x0a || c === 0x0d) break;
    return { offset: i, message: `control character ${shown(text, i)} in a string; escape it` };
  }
  const c = text[end];
  if (c === "\n" || c === "\r") return { offset: end, message: "unterminated string (write a line break as \\n)" };
  return { offset, message: "unterminated string" };
}

/** One character of the input: `"x"` when printable ASCII, else its code point (`U+00A0`). */
function shown(text: string, offset: number): string {
  const code = text.codePointAt(offset) ?? 0;
  if (code > 0x20 && code < 0x7f) return JSON.stringify(String.fromCodePoint(code));
  return `U+${code.toString(16).toUpperCase().padStart(4, "0")}`;
}
