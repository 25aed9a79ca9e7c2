/**
 * The hand-written shell reader Gatehouse used before the tree-sitter parser (main before issue 26),
 * kept unchanged as the baseline of bench/shell-parse.bench.ts. Nothing else imports it.
 */

/** One simple command of a command line. */
export interface SimpleCommand {
  /** The command's words as written, whitespace collapsed, grouping keywords (`if`, `then`, `{`…) removed. */
  readonly text: string;
  /** It redirects output to a file (`>`, `>>`; not `2>&1` or `>/dev/null`): it writes. */
  readonly writes: boolean;
}

/** Words that only group or sequence other commands: `then rm x` runs `rm x`. */
const GROUPING_WORDS = new Set(["if", "then", "else", "elif", "fi", "do", "done", "while", "until", "{", "}", "!"]);
/** An output redirection that writes nowhere: `2>&1`, `>&2`, `>/dev/null`. */
const HARMLESS_REDIRECT = /^\d*>>?(?:&\d+|\s*\/dev\/null)$/;

/**
 * Splits on `;`, `&`, `&&`, `|`, `||` and newlines, and inside `$(...)`, `<(...)`, `>(...)`,
 * backticks and `( ... )` subshells. Undefined when quoting or nesting is unbalanced: such a
 * line cannot be read, so no allow rule may match it.
 */
export function splitCommands(command: string): SimpleCommand[] | undefined {
  const out: SimpleCommand[] = [];
  const stack: Frame[] = [];
  let current = newFrame();
  // `$'…'` (ANSI-C quoting) is a single-quoted string in which a backslash escapes the next character.
  let quote: "'" | '"' | "$'" | null = null;
  const flush = () => {
    const text = stripGrouping(current.text);
    if (text !== "") out.push({ text, writes: current.writes });
    current = newFrame();
  };
  // A substitution inside double quotes still runs: its text is read unquoted, and the quote resumes after it.
  const open = (kind: Frame["kind"]) => {
    stack.push({ ...current, kind, quote });
    current = newFrame();
    quote = null;
  };
  const close = () => {
    flush();
    const outer = stack.pop() as Frame;
    quote = outer.quote;
    current = { ...outer, kind: "top", quote: null };
    // The outer command keeps a placeholder where a substitution was: `echo $(x) y` is `echo _ y`.
    if (outer.kind !== "subshell") current.text += " _ ";
  };
  for (let i = 0; i < command.length; i++) {
    const ch = command[i] as string;
    const next = command[i + 1];
    if (quote === "'") {
      if (ch === "'") quote = null;
      current.text += ch;
      continue;
    }
    if (quote === "$'") {
      if (ch === "\\") {
        current.text += ch + (next ?? "");
        i++;
      } else {
        if (ch === "'") quote = null;
        current.text += ch;
      }
      continue;
    }
    if (quote === null && ch === "$" && next === "'") {
      quote = "$'";
      current.text += "$'";
      i++;
      continue;
    }
    if (ch === "\\") {
      current.text += ch + (next ?? "");
      i++;
      continue;
    }
    if (quote === '"' && ch === '"') {
      quote = null;
      current.text += ch;
      continue;
    }
    if ((ch === "$" || ch === "<" || ch === ">") && next === "(") {
      open("paren");
      i++;
      continue;
    }
    if (ch === "`") {
      if (stack.at(-1)?.kind === "backtick") close();
      else open("backtick");
      continue;
    }
    if (quote === '"') {
      current.text += ch;
      continue;
    }
    if (ch === ")" && (stack.at(-1)?.kind === "paren" || stack.at(-1)?.kind === "subshell")) {
      close();
      continue;
    }
    if (ch === "(" && current.text.trim() === "") {
      open("subshell");
      continue;
    }
    if (ch === '"' || ch === "'") {
      quote = ch;
      current.text += ch;
      continue;
    }
    if (ch === ">") {
      const redirect = redirectAt(command, i, current.text);
      if (!HARMLESS_REDIRECT.test(redirect.text)) current.writes = true;
      current.text += command.slice(i, redirect.end);
      i = redirect.end - 1;
      continue;
    }
    if (ch === "&" && (current.text.endsWith("<") || next === ">")) {
      // `<&3`, `&>file`: a redirection, not a separator.
      if (next === ">") current.writes = true;
      current.text += ch;
      continue;
    }
    if (ch === ";" || ch === "&" || ch === "|" || ch === "\n") {
      flush();
      continue;
    }
    current.text += ch;
  }
  if (quote !== null || stack.length > 0) return undefined;
  flush();
  return out;
}

interface Frame {
  kind: "top" | "paren" | "subshell" | "backtick";
  text: string;
  writes: boolean;
  /** The quote open around the substitution this frame waits for. */
  quote: "'" | '"' | "$'" | null;
}

function newFrame(): Frame {
  return { kind: "top", text: "", writes: false, quote: null };
}

/** The redirection starting at `>` (with its file descriptor before it and its target after it). */
function redirectAt(command: string, at: number, before: string): { text: string; end: number } {
  const fd = /\d*$/.exec(before)?.[0] ?? "";
  const rest = /^>>?(?:&\d+|\s*[^\s;&|()<>]*)/.exec(command.slice(at))?.[0] ?? ">";
  return { text: `${fd}${rest}`, end: at + rest.length };
}

function stripGrouping(text: string): string {
  const words = text.trim().split(/\s+/);
  while (words.length > 0 && GROUPING_WORDS.has(words[0] as string)) words.shift();
  while (words.length > 0 && GROUPING_WORDS.has(words.at(-1) as string) && words.at(-1) !== "!") words.pop();
  return words.join(" ");
}

/** The command without leading `VAR=value` assignments (`FOO=1 rm x` runs `rm`). */
export function withoutAssignments(text: string): string {
  return text.replace(/^(?:[A-Za-z_]\w*=(?:'[^']*'|"[^"]*"|\S*)\s+)+/, "");
}
