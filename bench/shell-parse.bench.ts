// The cost of reading one Bash line (issue 26): the tree-sitter reader (src/permissions/shell.ts,
// parsed afresh every time, without its memory of recent lines) against the hand-written reader
// it replaced (bench/old-shell-reader.ts), on the same lines in the same process; and what a
// whole permission check of a Bash call costs with it. Subjects are interleaved in rounds after a
// warm-up; ratios are of medians.
//
//   node --expose-gc --import tsx bench/shell-parse.bench.ts   (or: npm run bench -- shell-parse)

import { PermissionPolicy, type PermissionRule, parseRule } from "../src/permissions/index.js";
import { parseCommandLine } from "../src/permissions/shell.js";
import { loadShellParser } from "../src/permissions/shell-parser.js";
import { splitCommands as oldSplitCommands } from "./old-shell-reader.js";

const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});

/** Lines of the kind an agent writes, short and long. */
const LINES = [
  "ls -la",
  "npm test",
  "git status && git diff --stat",
  "cd packages/api && npm run build 2>&1 | tail -n 20",
  'grep -rn "TODO" src --include="*.ts" | head -50',
  "find . -name '*.log' -mtime +7 -exec rm {} \\;",
  'for f in src/*.ts; do echo "$f"; wc -l "$f"; done',
  "cat <<'EOF' > notes.md\n# Notes\n\nSome text with $(not a command) in it.\nEOF",
  'docker run --rm -v "$(pwd)":/app -w /app node:20 sh -c "npm ci && npm test"',
  "python3 -c 'import sys; print(sys.version)' && pip install -r requirements.txt > /dev/null",
];

function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

/** Median µs per line of each subject: `rounds` interleaved rounds of `n` passes over LINES. */
function compare(subjects: ((line: string) => unknown)[], n: number, rounds: number): number[] {
  for (const s of subjects) for (let i = 0; i < 20; i++) for (const line of LINES) s(line);
  const samples = subjects.map(() => [] as number[]);
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < subjects.length; k++) {
      const i = (k + r) % subjects.length;
      const subject = subjects[i] as (line: string) => unknown;
      gc();
      const t = performance.now();
      for (let j = 0; j < n; j++) for (const line of LINES) subject(line);
      samples[i]?.push(((performance.now() - t) * 1000) / (n * LINES.length));
    }
  }
  return samples.map(median);
}

await loadShellParser();
const [parser, old] = compare([parseCommandLine, oldSplitCommands], 40, 15);
console.log(
  `shell reader, per Bash line: tree-sitter ${(parser as number).toFixed(1)} µs vs hand-written ${(old as number).toFixed(1)} µs (${((parser as number) / (old as number)).toFixed(1)}x)`,
);

// A whole check of one call: deny rules, then ask and allow rules and the read-only set.
const rules: PermissionRule[] = (["Bash(rm:*)", "Bash(git push:*)", "Bash(npm test:*)"] as const).map((rule, i) => {
  const behavior = (["deny", "ask", "allow"] as const)[i] ?? "allow";
  const parsed = parseRule(rule, behavior);
  if (typeof parsed === "string") throw new Error(parsed);
  return { behavior, rule, parsed, id: `bench.${behavior}.${i}`, source: "bench", baseDir: "/p" };
});
const policy = new PermissionPolicy({ mode: "default", rules, cwd: "/p" });
let unique = 0;
// A fresh line each time (a comment that changes), so no call is answered from the memory of recent lines.
const check = (line: string) => policy.decide("Bash", { command: `${line} # ${unique++}` }, undefined);
const [decide] = compare([check], 20, 9);
console.log(`permission check of one Bash call (first time its line is seen): ${(decide as number).toFixed(1)} µs`);
