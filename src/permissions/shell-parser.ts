import { createRequire } from "node:module";
import type { Parser, Tree } from "web-tree-sitter";

/**
 * The Bash grammar behind every reading of a shell line (`web-tree-sitter` + `tree-sitter-bash`,
 * both WebAssembly: web-tree-sitter's inside its npm package, tree-sitter-bash's grammar vendored
 * in vendor/tree-sitter-bash/, found through package.json's `imports`, from the sources and from
 * dist/ alike; scripts/vendor-tree-sitter-bash.ts says why and refreshes it). Chosen over `sh-syntax` (mvdan/sh as
 * WebAssembly) on a corpus of the hard cases (bench/shell-parse.bench.ts, docs/permissions.md):
 * both read comments, `case` arms, heredocs, ANSI-C strings and substitutions in redirection
 * targets, but `sh-syntax` starts a fresh Go WebAssembly instance for every parse (about 38 ms a
 * line, and only asynchronously), where tree-sitter parses in well under a millisecond,
 * synchronously, once loaded. Its known misreadings (a line continuation inside a word, a
 * substitution in a `<<-` heredoc) are caught by the reader in shell.ts and make a line
 * unreadable rather than misread.
 *
 * Loading is asynchronous (WebAssembly), so it happens once: the tool door awaits
 * `loadShellParser()` before it checks a Bash call; until it has loaded every line is unreadable,
 * which no allow rule can allow.
 */
let parser: Parser | undefined;
let loading: Promise<void> | undefined;
let failure: string | undefined;

/** Loads the grammar (once; later calls return the same promise). Never rejects: a failure leaves every line unreadable. */
export function loadShellParser(): Promise<void> {
  loading ??= load().catch((error: unknown) => {
    failure = error instanceof Error ? error.message : String(error);
  });
  return loading;
}

async function load(): Promise<void> {
  const { Parser, Language } = await import("web-tree-sitter");
  await Parser.init();
  const wasm = createRequire(import.meta.url).resolve("#tree-sitter-bash.wasm");
  const bash = await Language.load(wasm);
  const ready = new Parser();
  ready.setLanguage(bash);
  parser = ready;
}

/** Whether the grammar has loaded: until then every answer is "unreadable", and none is worth keeping. */
export function shellParserLoaded(): boolean {
  return parser !== undefined;
}

/**
 * The syntax tree of a line, or why there is none. The caller deletes the tree.
 * @internal web-tree-sitter's types stay out of the published declarations (they need Emscripten's).
 */
export function parseShell(text: string): Tree | string {
  if (parser === undefined)
    return failure === undefined
      ? "the shell parser has not loaded yet"
      : `the shell parser failed to load: ${failure}`;
  return parser.parse(text) ?? "the shell parser gave up on this line";
}
