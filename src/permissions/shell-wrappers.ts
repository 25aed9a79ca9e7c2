import type { WordValue } from "./shell-words.js";

/**
 * What a command that runs other commands runs (docs/permissions.md, "Wrappers"). Claude Code
 * strips `timeout`, `time`, `nice`, `nohup`, `stdbuf`, `command`, `builtin`, `noglob` and a bare
 * `xargs` before matching; Gatehouse strips those and `env` (its assignments become the inner
 * command's), and reads the command inside `eval`, `sh -c`, `find -exec`, `xargs` with flags,
 * `sudo`, `trap`, `watch` and the like as a command of its own, keeping the wrapper as another.
 */
export type Unwrapped =
  /** Not a wrapper: the command itself. */
  | { readonly kind: "none" }
  /** The wrapper disappears: the inner command is matched, with `assignments` before it. */
  | {
      readonly kind: "strip";
      readonly inner: readonly WordValue[];
      readonly assignments?: readonly WordValue[];
      /** The inner command also gets words only known at run time (`xargs` adds its input). */
      readonly fed?: true;
    }
  /** The wrapper is a command, and so is each inner one. */
  | { readonly kind: "runs"; readonly inner: readonly (readonly WordValue[])[]; readonly fed?: true }
  /** A string that the wrapper runs as shell code; `keep`: the wrapper is a command too. */
  | { readonly kind: "code"; readonly code: readonly WordValue[]; readonly keep: boolean }
  /** A shell reading its commands from standard input. */
  | { readonly kind: "stdin-shell" }
  | { readonly kind: "unreadable"; readonly reason: string };

const SHELLS = new Set(["sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "busybox-sh"]);

interface OptionSpec {
  /** Short options that take the next word (or the rest of their own word) as a value. */
  readonly short?: string;
  /** Long options that take a value (`--name value` or `--name=value`). */
  readonly long?: readonly string[];
}

/**
 * The index of the first word after the options (from `start`), or undefined when an option is
 * only known at run time.
 */
function afterOptions(words: readonly WordValue[], start: number, spec: OptionSpec): number | undefined {
  let i = start;
  while (i < words.length) {
    const word = words[i] as WordValue;
    if (!word.literal) return undefined;
    const w = word.value;
    if (w === "--") return i + 1;
    if (!w.startsWith("-") || w === "-") return i;
    if (w.startsWith("--")) {
      const name = w.slice(2).split("=")[0] as string;
      i += !w.includes("=") && spec.long?.includes(name) ? 2 : 1;
      continue;
    }
    const last = w.length - 1;
    const takes = [...w.slice(1)].findIndex((ch) => spec.short?.includes(ch));
    // `-n5` carries its value; `-n 5` takes the next word.
    i += takes !== -1 && takes + 1 === last ? 2 : 1;
  }
  return i;
}

const strip = (inner: readonly WordValue[], assignments?: readonly WordValue[]): Unwrapped =>
  inner.length === 0 ? { kind: "none" } : { kind: "strip", inner, ...(assignments ? { assignments } : {}) };

const from = (words: readonly WordValue[], at: number | undefined, then: (i: number) => Unwrapped): Unwrapped =>
  at === undefined
    ? { kind: "unreadable", reason: `the options of ${words[0]?.value} are only known at run time` }
    : then(at);

export function unwrap(words: readonly WordValue[]): Unwrapped {
  const name = words[0]?.value.replace(/^.*\//, "") ?? "";
  switch (name) {
    case "timeout":
      return from(words, afterOptions(words, 1, { short: "sk", long: ["signal", "kill-after"] }), (i) =>
        strip(words.slice(i + 1)),
      );
    case "nice":
      return from(words, afterOptions(words, 1, { short: "n", long: ["adjustment"] }), (i) => strip(words.slice(i)));
    case "stdbuf":
      return from(words, afterOptions(words, 1, { short: "ioe", long: ["input", "output", "error"] }), (i) =>
        strip(words.slice(i)),
      );
    case "time":
    case "nohup":
    case "builtin":
    case "noglob":
    case "coproc":
      return from(words, afterOptions(words, 1, {}), (i) => strip(words.slice(i)));
    case "command":
      // `command -v x` looks a command up; it runs nothing.
      if (words.slice(1).some((w) => /^-[a-zA-Z]*[vV]/.test(w.value))) return { kind: "none" };
      return from(words, afterOptions(words, 1, {}), (i) => strip(words.slice(i)));
    case "xargs": {
      const inner = (i: number) => (words.length > i ? words.slice(i) : [{ ...literal("echo") }]);
      if (words[1]?.value.startsWith("-") !== true) return { kind: "strip", inner: inner(1), fed: true };
      return from(
        words,
        afterOptions(words, 1, {
          short: "adEILnPs",
          long: ["arg-file", "delimiter", "eof", "replace", "max-lines", "max-args", "max-procs", "max-chars"],
        }),
        (i) => ({ kind: "runs", inner: [inner(i)], fed: true }),
      );
    }
    case "env":
      return unwrapEnv(words);
    case "eval":
      return { kind: "code", code: words.slice(1), keep: false };
    case "trap":
      if (words.length < 3 || words[1]?.value.startsWith("-")) return { kind: "none" };
      return { kind: "code", code: [words[1] as WordValue], keep: true };
    case "watch":
      return from(words, afterOptions(words, 1, { short: "nqd", long: ["interval", "differences"] }), (i) =>
        i < words.length ? { kind: "code", code: words.slice(i), keep: true } : { kind: "none" },
      );
    case "su": {
      const c = words.findIndex((w) => w.value === "-c" || w.value === "--command");
      const code = c === -1 ? undefined : words[c + 1];
      return code ? { kind: "code", code: [code], keep: true } : { kind: "none" };
    }
    case "sudo":
    case "doas":
    case "exec":
    case "setsid":
    case "ionice":
    case "chrt":
    case "taskset":
      return from(
        words,
        afterOptions(words, 1, {
          short:
            name === "exec" ? "a" : name === "ionice" ? "cnp" : name === "sudo" || name === "doas" ? "ughpCDrtUT" : "",
          long: ["user", "group", "host", "prompt", "chdir", "role", "type", "other-user", "close-from"],
        }),
        (i) => (i < words.length ? { kind: "runs", inner: [words.slice(i)] } : { kind: "none" }),
      );
    case "find":
      return unwrapFind(words);
    default:
      if (SHELLS.has(name)) return unwrapShell(words);
      return { kind: "none" };
  }
}

function literal(value: string): WordValue {
  return { value, literal: true, glob: false, brace: false };
}

/** `env [-i] [-u NAME] [NAME=value…] command…`: the assignments go before the inner command. */
function unwrapEnv(words: readonly WordValue[]): Unwrapped {
  if (words.some((w) => /^(?:-[a-zA-Z]*S|--split-string)/.test(w.value)))
    return { kind: "unreadable", reason: "env -S splits a string into a command at run time" };
  return from(words, afterOptions(words, 1, { short: "uC", long: ["unset", "chdir"] }), (start) => {
    let i = start;
    while (i < words.length && /^[A-Za-z_]\w*=/.test(words[i]?.value ?? "")) i++;
    return strip(words.slice(i), words.slice(start, i));
  });
}

/** `find … -exec cmd {} ;` runs `cmd` for each file (also `-execdir`, `-ok`, `-okdir`). */
function unwrapFind(words: readonly WordValue[]): Unwrapped {
  const inner: WordValue[][] = [];
  for (let i = 1; i < words.length; i++) {
    if (!/^-(?:exec|execdir|ok|okdir)$/.test(words[i]?.value ?? "")) continue;
    const end = words.findIndex((w, j) => j > i && (w.value === ";" || w.value === "+"));
    const stop = end === -1 ? words.length : end;
    inner.push(words.slice(i + 1, stop));
    i = stop;
  }
  return inner.length === 0 ? { kind: "none" } : { kind: "runs", inner, fed: true };
}

/** `bash -c 'code'` runs its string; `bash` alone reads commands from its input; `bash file` runs a file. */
function unwrapShell(words: readonly WordValue[]): Unwrapped {
  let command = false;
  for (let i = 1; i < words.length; i++) {
    const word = words[i] as WordValue;
    if (!word.literal)
      return { kind: "unreadable", reason: `the arguments of ${words[0]?.value} are only known at run time` };
    const w = word.value;
    if (w === "--" || w === "-") continue;
    if (/^[-+]o$/.test(w) || w === "--rcfile" || w === "--init-file") {
      i++;
      continue;
    }
    if (/^-[a-zA-Z]+$/.test(w) || /^\+[a-zA-Z]+$/.test(w)) {
      if (w.startsWith("-") && w.includes("c")) command = true;
      if (w.startsWith("-") && w.includes("s")) return { kind: "stdin-shell" };
      continue;
    }
    if (w.startsWith("--")) continue;
    return command ? { kind: "code", code: [word], keep: true } : { kind: "none" };
  }
  return command ? { kind: "unreadable", reason: "sh -c without a command string" } : { kind: "stdin-shell" };
}
