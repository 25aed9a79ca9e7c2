import type { Node } from "web-tree-sitter";

/** A word of a command as bash hands it to the program, as far as it can be known without running anything. */
export interface WordValue {
  /** The word after quote removal; the parts that expand at run time (`$x`, `$(…)`) as written. */
  readonly value: string;
  /** Nothing in it expands at run time. */
  readonly literal: boolean;
  /** An unquoted `*`, `?` or `[`: bash may replace it by file names. */
  readonly glob: boolean;
  /** An unquoted brace expansion (`{a,b}`, `{1..3}`): one word becomes several. */
  readonly brace: boolean;
}

const EXPANDING = new Set([
  "simple_expansion",
  "expansion",
  "command_substitution",
  "process_substitution",
  "arithmetic_expansion",
  "brace_expression",
]);

/**
 * The value of one word node (`word`, `string`, `raw_string`, `ansi_c_string`, `concatenation`, …).
 * @internal web-tree-sitter's types stay out of the published declarations.
 */
export function wordValue(node: Node): WordValue {
  switch (node.type) {
    case "word":
    case "number":
    case "command_name":
    case "variable_name":
    case "special_variable_name":
    case "file_descriptor": {
      if (node.type === "command_name" && node.namedChildCount === 1) return wordValue(node.namedChildren[0] as Node);
      const text = node.text;
      return {
        value: unescapeUnquoted(text),
        literal: node.namedChildCount === 0 || node.namedChildren.every((c) => c !== null && !EXPANDING.has(c.type)),
        glob: /(?<!\\)(?:\\\\)*[*?[]/.test(text),
        brace: /(?<!\\)\{[^{}\s]*(?:,|\.\.)[^{}\s]*\}/.test(text),
      };
    }
    case "raw_string":
      return { value: node.text.slice(1, -1), literal: true, glob: false, brace: false };
    case "ansi_c_string":
      return { value: ansiC(node.text.slice(2, -1)), literal: true, glob: false, brace: false };
    case "string":
    case "translated_string":
      return doubleQuoted(node);
    case "concatenation": {
      const parts = node.children.filter((c): c is Node => c !== null).map(wordValue);
      return {
        value: parts.map((p) => p.value).join(""),
        literal: parts.every((p) => p.literal),
        glob: parts.some((p) => p.glob),
        brace: parts.some((p) => p.brace) || node.children.some((c) => c?.text === "{" || c?.text === "}"),
      };
    }
    default:
      return { value: node.text, literal: false, glob: false, brace: node.type === "brace_expression" };
  }
}

/** `"…"` and `$"…"`: backslash escapes only `$`, `` ` ``, `"`, `\` and a newline; expansions stay as written. */
function doubleQuoted(node: Node): WordValue {
  const open = node.type === "translated_string" ? 2 : 1;
  const start = node.startIndex + open;
  const end = node.endIndex - 1;
  const source = node.text;
  let value = "";
  let literal = true;
  let at = start;
  for (const child of node.namedChildren) {
    if (child === null || child.type === "string_content") continue;
    value += unescapeDoubleQuoted(source.slice(at - node.startIndex, child.startIndex - node.startIndex));
    value += child.text;
    literal = false;
    at = child.endIndex;
  }
  value += unescapeDoubleQuoted(source.slice(at - node.startIndex, end - node.startIndex));
  return { value, literal, glob: false, brace: false };
}

function unescapeDoubleQuoted(text: string): string {
  return text.replace(/\\\n/g, "").replace(/\\([$`"\\])/g, "$1");
}

/** Outside quotes a backslash keeps the next character literal, and a backslash-newline disappears. */
function unescapeUnquoted(text: string): string {
  return text.replace(/\\\n/g, "").replace(/\\(.)/gs, "$1");
}

const C_ESCAPES: Readonly<Record<string, string>> = {
  a: "\x07",
  b: "\b",
  e: "\x1b",
  E: "\x1b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  "\\": "\\",
  "'": "'",
  '"': '"',
  "?": "?",
};

/** The body of `$'…'` decoded as bash does: `$'\x72m'` is `rm`. */
export function ansiC(body: string): string {
  return body.replace(
    /\\(?:([abeEfnrtv\\'"?])|([0-7]{1,3})|x([0-9a-fA-F]{1,2})|u([0-9a-fA-F]{1,4})|U([0-9a-fA-F]{1,8})|c(.))/gs,
    (_m, simple: string, octal: string, hex: string, u4: string, u8: string, control: string) => {
      if (simple !== undefined) return C_ESCAPES[simple] as string;
      if (octal !== undefined) return String.fromCharCode(Number.parseInt(octal, 8) & 0xff);
      if (hex !== undefined) return String.fromCharCode(Number.parseInt(hex, 16));
      const code = u4 ?? u8;
      if (code !== undefined) {
        const point = Number.parseInt(code, 16);
        return point <= 0x10ffff ? String.fromCodePoint(point) : "";
      }
      return String.fromCharCode((control as string).toUpperCase().charCodeAt(0) ^ 0x40);
    },
  );
}
