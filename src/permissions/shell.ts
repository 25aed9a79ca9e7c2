import type { Node } from "web-tree-sitter";
import { parseShell, shellParserLoaded } from "./shell-parser.js";
import { type WordValue, wordValue } from "./shell-words.js";
import { unwrap } from "./shell-wrappers.js";

/**
 * The simple commands a shell line runs, read from bash's syntax tree (shell-parser.ts), for
 * `Bash(...)` permission rules, the read-only set and the command hooks' `if` field. Every
 * command that will run is returned on its own: those after `;`, `&&`, `||`, `|`, `&` and
 * newlines, in subshells, groups, functions, `if`/`while`/`for`/`case` bodies, inside `$(…)`,
 * backticks, `<(…)` and `>(…)` wherever they stand (arguments, assignments, redirection targets,
 * heredocs), and inside the wrappers Claude Code unwraps (shell-wrappers.ts). What cannot be
 * known without running the line (`$cmd args`, `eval "$x"`) makes the line unreadable: no allow
 * rule can allow it, while a deny rule still sees every command that could be read.
 */

/** One simple command of a command line. */
export interface SimpleCommand {
  /** Its leading assignments and words, after quote removal (`'r'm` is `rm`), joined by single spaces. */
  readonly text: string;
  /** It redirects output to a file (`>`, `>>`, `&>`; not `2>&1` or `>/dev/null`): it writes. */
  readonly writes: boolean;
}

/** A simple command with what the read-only check needs to know about it. */
export interface ShellCommand extends SimpleCommand {
  /** The words after the assignments and wrappers, quotes removed (expansions as written). */
  readonly argv: readonly string[];
  /** Leading `NAME=value` words. */
  readonly assignments: readonly string[];
  /** Every word is known without running anything (no `$x`, `$(…)`, no words `xargs` adds). */
  readonly literal: boolean;
  /** Some word has an unquoted glob (`*.ts`): bash may expand it to anything, a flag included. */
  readonly glob: boolean;
  /** The files its output redirections write (`/dev/null` and descriptors left out). */
  readonly writeTargets: readonly string[];
}

/** Every command of a line that could be read, and why the line as a whole cannot be, if it cannot. */
export interface CommandLine {
  readonly commands: readonly ShellCommand[];
  /** Set when some part is only known at run time, or the line does not parse. */
  readonly unreadable?: string;
}

/** Claude Code's limit too: a longer line is not analysed (docs/permissions.md). */
const MAX_LENGTH = 10_000;
/** `eval`, `sh -c` and `trap` strings nest; past this depth the line is unreadable. */
const MAX_DEPTH = 8;

/** The last lines read: one call is checked against deny, ask and allow rules and the read-only set. */
const recent = new Map<string, CommandLine>();
const RECENT_LINES = 32;

export function readCommandLine(command: string): CommandLine {
  const known = recent.get(command);
  if (known !== undefined) return known;
  const line = parseCommandLine(command);
  if (shellParserLoaded()) {
    if (recent.size >= RECENT_LINES) recent.delete(recent.keys().next().value as string);
    recent.set(command, line);
  }
  return line;
}

/** `readCommandLine` without its memory of recent lines: every call parses (bench/shell-parse.bench.ts). */
export function parseCommandLine(command: string): CommandLine {
  const reader = new LineReader();
  if (command.length > MAX_LENGTH) reader.refuse(`the line is longer than ${MAX_LENGTH} characters`);
  reader.read(command, 0);
  return reader.result();
}

/** The commands of a line, or undefined when it cannot be read: no allow rule may match it. */
export function splitCommands(command: string): ShellCommand[] | undefined {
  const line = readCommandLine(command);
  return line.unreadable === undefined ? [...line.commands] : undefined;
}

/** The command without leading `VAR=value` assignments (`FOO=1 rm x` runs `rm`). */
export function withoutAssignments(text: string): string {
  return text.replace(/^(?:[A-Za-z_]\w*=(?:'[^']*'|"[^"]*"|\S*)\s+)+/, "");
}

/** Output redirection of the statement a command belongs to. */
interface Redirection {
  readonly targets: readonly WriteTarget[];
  /** The input handed to a shell that reads its commands from it (a heredoc or `<<<` string). */
  readonly stdinCode?: WordValue;
}

/** A file an output redirection writes, with its operator (`>`, `>>`, `&>`…). */
interface WriteTarget {
  readonly operator: string;
  readonly path: string;
}

const NO_REDIRECTION: Redirection = { targets: [] };
const WRITING_OPERATORS = new Set([">", ">>", "&>", "&>>", ">|", "<>", ">&", "&>|"]);
/** Nodes whose text is not shell syntax: a line continuation inside them is not one. */
const QUOTED = new Set(["raw_string", "string", "ansi_c_string", "heredoc_body", "comment", "translated_string"]);
/** Contexts where a variable's value is evaluated as arithmetic, which runs `a[$(…)]` inside it. */
const ARITHMETIC = /\(\(|\$\[|\blet\b|\[\[|-(?:eq|ne|lt|le|gt|ge)\b|\bdeclare\s+-\w*i|\btypeset\s+-\w*i/;

class LineReader {
  readonly #commands: ShellCommand[] = [];
  #unreadable: string | undefined;
  #depth = 0;
  /** Set while reading the second and later commands of a pipeline. */
  #piped = false;

  refuse(reason: string): void {
    this.#unreadable ??= reason;
  }

  result(): CommandLine {
    return {
      commands: Object.freeze(this.#commands),
      ...(this.#unreadable === undefined ? {} : { unreadable: this.#unreadable }),
    };
  }

  read(text: string, depth: number): void {
    if (depth > MAX_DEPTH) {
      this.refuse("shell code nested too deep to read");
      return;
    }
    const tree = parseRepaired(text);
    if (typeof tree === "string") {
      this.refuse(tree);
      return;
    }
    try {
      const root = tree.rootNode;
      if (root.hasError) this.refuse("the line does not parse as bash");
      this.#checkContinuations(root.text, root);
      if (ARITHMETIC.test(text) && /['"][^'"]*(?:\$\(|`)/.test(text))
        this.refuse("a quoted $(…) may run where a value is evaluated as arithmetic");
      const outer = this.#depth;
      this.#depth = depth;
      this.#walk(root, NO_REDIRECTION);
      this.#depth = outer;
    } finally {
      tree.delete();
    }
  }

  /**
   * tree-sitter reads a backslash-newline between two characters of a word (`r\⏎m`) as a word
   * break, where bash joins the word: such a line is refused rather than misread.
   */
  #checkContinuations(text: string, root: Node): void {
    for (const m of text.matchAll(/(\\+)\n/g)) {
      if (m[1]?.length === undefined || m[1].length % 2 === 0) continue;
      const at = (m.index ?? 0) + m[1].length - 1;
      const before = text[at - 1];
      const after = text[at + 2];
      if (before === undefined || after === undefined || /\s/.test(before) || /\s/.test(after)) continue;
      let node: Node | null = root.descendantForIndex(at);
      while (node !== null && !QUOTED.has(node.type)) node = node.parent;
      if (node === null) this.refuse("a line continuation inside a word");
    }
  }

  #walk(node: Node, redirection: Redirection): void {
    switch (node.type) {
      case "comment":
        return;
      case "command":
        this.#command(node, redirection);
        return;
      case "declaration_command":
      case "unset_command":
      case "test_command":
        this.#builtin(node, redirection);
        this.#nested(node);
        return;
      case "variable_assignment":
      case "variable_assignments":
        // `for ((i=0; …))` assigns inside arithmetic: nothing runs.
        if (node.parent?.type === "c_style_for_statement") {
          this.#nested(node);
          return;
        }
        this.#push([], this.#assignmentsOf(node), redirection, true);
        this.#nested(node);
        return;
      case "redirected_statement":
        this.#redirected(node, redirection);
        return;
      case "command_substitution":
      case "process_substitution":
        this.#isolated(() => this.#children(node, NO_REDIRECTION));
        return;
      case "heredoc_body":
        this.#checkHeredoc(node);
        this.#children(node, NO_REDIRECTION);
        return;
      case "expansion":
        if (/@P\}$/.test(node.text)) this.refuse("a prompt expansion (@P) runs the $(…) in a value");
        this.#children(node, NO_REDIRECTION);
        return;
      case "pipeline":
        this.#pipeline(node, redirection);
        return;
      default:
        this.#children(node, redirection);
        return;
    }
  }

  #children(node: Node, redirection: Redirection): void {
    // A leaf (a word, an operator) holds no command; skipping it saves a call into the parser per token.
    for (const child of node.children) if (child !== null && child.childCount > 0) this.#walk(child, redirection);
  }

  /** The commands inside a node's words (substitutions), not the node's own command. */
  #nested(node: Node): void {
    for (const child of node.children) {
      if (child === null) continue;
      if (child.type === "variable_assignment") this.#nested(child);
      else this.#walk(child, NO_REDIRECTION);
    }
  }

  /** A substitution runs in its own context: not piped into, not redirected by its host. */
  #isolated(read: () => void): void {
    const piped = this.#piped;
    this.#piped = false;
    read();
    this.#piped = piped;
  }

  #pipeline(node: Node, redirection: Redirection): void {
    const piped = this.#piped;
    // `cat <<EOF | sh`: tree-sitter puts the rest of the pipeline inside the heredoc redirection.
    const continued = node.parent?.type === "heredoc_redirect";
    node.namedChildren.forEach((child, i) => {
      if (child === null) return;
      this.#piped = piped || continued || i > 0;
      this.#walk(child, redirection);
    });
    this.#piped = piped;
  }

  #redirected(node: Node, outer: Redirection): void {
    const targets = [...outer.targets];
    let stdinCode = outer.stdinCode;
    let body: Node | null = null;
    node.children.forEach((child, i) => {
      if (child === null) return;
      if (node.fieldNameForChild(i) === "body") {
        body = child;
        return;
      }
      const found = this.#redirection(child);
      targets.push(...found.targets);
      stdinCode = found.stdinCode ?? stdinCode;
    });
    if (body !== null) this.#walk(body, { targets, ...(stdinCode ? { stdinCode } : {}) });
  }

  /** One redirection: what it writes, what a shell would read from it, and the commands in its words. */
  #redirection(node: Node): Redirection {
    this.#nested(node);
    if (node.type === "herestring_redirect") {
      const word = node.namedChildren.find((c) => c !== null && c.type !== "file_descriptor");
      return { targets: [], ...(word ? { stdinCode: wordValue(word) } : {}) };
    }
    if (node.type === "heredoc_redirect") {
      const targets: WriteTarget[] = [];
      for (const child of node.namedChildren)
        if (child?.type === "file_redirect") targets.push(...this.#redirection(child).targets);
      const body = node.namedChildren.find((c) => c?.type === "heredoc_body");
      return { targets, stdinCode: { value: body?.text ?? "", literal: true, glob: false, brace: false } };
    }
    if (node.type !== "file_redirect") return NO_REDIRECTION;
    const operator = node.children.find((c) => c !== null && !c.isNamed)?.text ?? "";
    const destination = node.childForFieldName("destination");
    if (!WRITING_OPERATORS.has(operator) || destination === null) return NO_REDIRECTION;
    const target = wordValue(destination);
    if (target.literal && (target.value === "/dev/null" || (operator === ">&" && /^(?:\d+-?|-)$/.test(target.value))))
      return NO_REDIRECTION;
    const descriptor = node.childForFieldName("descriptor")?.text ?? "";
    return { targets: [{ operator: `${descriptor}${operator}`, path: target.value }] };
  }

  /** tree-sitter misses a substitution in some heredoc bodies (`<<-`): an unquoted body with one it did not find is unreadable. */
  #checkHeredoc(node: Node): void {
    const found = node.namedChildren.some((c) => c?.type === "command_substitution");
    const start = node.parent?.namedChildren.find((c) => c?.type === "heredoc_start")?.text ?? "";
    const quoted = /['"\\]/.test(start);
    if (!quoted && !found && /\$\(|`/.test(node.text)) this.refuse("a heredoc substitution the parser did not read");
  }

  #command(node: Node, outer: Redirection): void {
    const targets = [...outer.targets];
    let stdinCode = outer.stdinCode;
    const words: WordValue[] = [];
    let nameKnown = true;
    node.children.forEach((child, i) => {
      if (child === null) return;
      const field = node.fieldNameForChild(i);
      if (field === "name" || field === "argument") {
        const word = wordValue(child);
        if (field === "name" && (!word.literal || word.glob || word.brace)) nameKnown = false;
        words.push(word);
        if (child.childCount > 0) this.#walk(child, NO_REDIRECTION);
      } else if (field === "redirect") {
        const found = this.#redirection(child);
        targets.push(...found.targets);
        stdinCode = found.stdinCode ?? stdinCode;
      } else if (child.type !== "variable_assignment") this.#walk(child, NO_REDIRECTION);
      else this.#nested(child);
    });
    if (!nameKnown) this.refuse(`a command name only known at run time: ${node.childForFieldName("name")?.text}`);
    const redirection = { targets, ...(stdinCode ? { stdinCode } : {}) };
    this.#emit(words, this.#assignmentsOf(node), redirection);
  }

  /** A command's words after the wrappers it is run through (shell-wrappers.ts). */
  #emit(words: readonly WordValue[], assignments: readonly string[], redirection: Redirection, fed = false): void {
    const unwrapped = unwrap(words);
    switch (unwrapped.kind) {
      case "none":
        this.#push(words, assignments, redirection, false, fed);
        return;
      case "strip":
        this.#emit(
          unwrapped.inner,
          [...assignments, ...(unwrapped.assignments ?? []).map((w) => quoteAssignment(w.value))],
          redirection,
          fed || unwrapped.fed === true,
        );
        return;
      case "runs":
        this.#push(words, assignments, redirection);
        for (const inner of unwrapped.inner) this.#emit(inner, [], NO_REDIRECTION, fed || unwrapped.fed === true);
        return;
      case "code": {
        if (unwrapped.keep) this.#push(words, assignments, redirection);
        if (!unwrapped.code.every((w) => w.literal)) {
          this.refuse(`${words[0]?.value} runs code only known at run time`);
          return;
        }
        this.#isolated(() => this.read(unwrapped.code.map((w) => w.value).join(" "), this.#depth + 1));
        return;
      }
      case "stdin-shell":
        this.#push(words, assignments, redirection);
        if (this.#piped) {
          this.refuse(`${words[0]?.value} runs commands piped into it`);
          return;
        }
        if (redirection.stdinCode === undefined) return;
        if (!redirection.stdinCode.literal) {
          this.refuse(`${words[0]?.value} runs code only known at run time`);
          return;
        }
        this.read(redirection.stdinCode.value, this.#depth + 1);
        return;
      case "unreadable":
        this.#push(words, assignments, redirection);
        this.refuse(unwrapped.reason);
        return;
    }
  }

  /** `fed`: `xargs` or `find -exec` adds words only known at run time. */
  #push(
    words: readonly WordValue[],
    assignments: readonly string[],
    redirection: Redirection,
    bare = false,
    fed = false,
  ): void {
    if (words.length === 0 && !bare) return;
    const argv = words.map((w) => w.value);
    this.#commands.push({
      // A write stays in the text, so only a rule that names it (`Bash(echo hi > out.txt)`) can match it.
      text: [...assignments, ...argv, ...redirection.targets.map((t) => `${t.operator} ${t.path}`)].join(" "),
      writes: redirection.targets.length > 0,
      argv,
      assignments,
      literal: !fed && words.every((w) => w.literal),
      glob: words.some((w) => w.glob),
      writeTargets: redirection.targets.map((t) => t.path),
    });
  }

  /** `export A=1`, `[[ -f x ]]`, `unset X`: a command whose words are the node's. */
  #builtin(node: Node, redirection: Redirection): void {
    const words: WordValue[] = node.children
      .filter((c): c is Node => c !== null && c.type !== "comment")
      .map((c) =>
        c.type === "variable_assignment"
          ? { value: renderAssignment(c), literal: assignmentLiteral(c), glob: false, brace: false }
          : c.isNamed
            ? wordValue(c)
            : { value: c.text, literal: true, glob: false, brace: false },
      );
    this.#push(words, [], redirection);
  }

  /** The leading `NAME=value` words of a command, rendered so `withoutAssignments` can strip them. */
  #assignmentsOf(node: Node): string[] {
    const own = node.type === "variable_assignment" ? [node] : node.children;
    return own.filter((c): c is Node => c?.type === "variable_assignment").map(renderAssignment);
  }
}

/**
 * tree-sitter-bash lexes a line break followed by a backslash (`ls⏎\\rm x`) into one bare word,
 * where bash ends the command at the line break. A bare word never holds an unescaped line
 * break, so a space is put after each such break (outside quotes, where it changes nothing) and
 * the line parsed again.
 */
function parseRepaired(text: string): ReturnType<typeof parseShell> {
  let source = text;
  for (let attempt = 0; ; attempt++) {
    const tree = parseShell(source);
    if (typeof tree === "string") return tree;
    const breaks = /\n\s*\\/.test(source) ? misreadBreaks(tree.rootNode) : [];
    if (breaks.length === 0) return tree;
    tree.delete();
    if (attempt === 4) return "the shell parser misreads the line breaks of this line";
    for (const at of breaks.sort((a, b) => b - a)) source = `${source.slice(0, at)} ${source.slice(at)}`;
  }
}

function misreadBreaks(node: Node): number[] {
  if (node.type === "word") {
    const out: number[] = [];
    for (const m of node.text.matchAll(/(\\*)\n/g))
      if ((m[1]?.length ?? 0) % 2 === 0) out.push(node.startIndex + (m.index ?? 0) + (m[1]?.length ?? 0) + 1);
    return out;
  }
  return node.children.flatMap((c) => (c === null ? [] : misreadBreaks(c)));
}

function renderAssignment(node: Node): string {
  const name = node.childForFieldName("name")?.text ?? "";
  const value = node.childForFieldName("value");
  const op = node.text.slice(name.length).startsWith("+=") ? "+=" : "=";
  if (value === null) return `${name}${op}`;
  return quoteAssignment(`${name}${op}${wordValue(value).value}`);
}

/** `NAME=a b` as `NAME='a b'`: one word again, as `withoutAssignments` expects. */
function quoteAssignment(assignment: string): string {
  const [, head = "", v = ""] = /^([^=]*\+?=)(.*)$/s.exec(assignment) ?? [];
  if (!/[\s'"]/.test(v)) return assignment;
  return /'/.test(v) ? `${head}"${v.replace(/"/g, "")}"` : `${head}'${v}'`;
}

function assignmentLiteral(node: Node): boolean {
  const value = node.childForFieldName("value");
  return value === null || wordValue(value).literal;
}
