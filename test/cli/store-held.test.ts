import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { gatehouse, tempProjects } from "./helpers.js";

// Issue 12, item 7: a sqlite3 shell (here: better-sqlite3 in a process of its own) holding a read
// transaction on the store while `gatehouse run` blocks an answer. The old text cannot leave the files
// while that snapshot is open; the user is told so, the audit trail records it, and the next command that
// opens the store removes it once the reader has let go.

const SECRET = "CANARY-held-4e8b1f";
const NOTICE = /^gatehouse: another connection is holding \S*gatehouse\.db .*$/m;

/** A policy as an operator would write it: the answer with the secret is blocked. */
const DLP = `export default {
  id: "dlp",
  setup(api) {
    api.on("before_response_emit", (e) => (e.content.includes("CANARY") ? { block: true } : undefined));
  },
};
`;

const SCRIPT = {
  runs: [{ match: "secret", turns: [{ text: `the answer is ${SECRET}` }] }, { turns: [{ text: "hello" }] }],
};

const READER = fileURLToPath(new URL("fixtures/sqlite-reader.mjs", import.meta.url));

/** A process holding a read snapshot of the database until `release()`. */
async function readerProcess(path: string): Promise<{ release(): Promise<void> }> {
  const child = spawn(process.execPath, [READER, path], { stdio: ["pipe", "pipe", "inherit"] });
  const exited = once(child, "exit");
  for await (const line of createInterface({ input: child.stdout })) if (line === "reading") break;
  return {
    release: async () => {
      child.stdin.end();
      await exited;
    },
  };
}

async function filesHolding(dir: string, needle: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const hits: string[] = [];
  for (const e of entries.filter((x) => x.isFile())) {
    const path = join(e.parentPath, e.name);
    if ((await readFile(path)).includes(needle)) hits.push(path);
  }
  return hits;
}

interface AuditRow {
  readonly hook: string;
  readonly pluginId: string;
  readonly outcome: string;
  readonly category: string | null;
}

describe("gatehouse with another connection holding the store", () => {
  const fresh = tempProjects();

  test("a blocked answer while a sqlite3 shell holds a read transaction: run says so on stderr without content, audit records it, the next command cleans the files", async () => {
    const cwd = await fresh({
      "script.json": SCRIPT,
      "dlp.mjs": DLP,
      "gatehouse.json": { model: "scripted:script.json", plugins: [{ path: "dlp.mjs" }] },
    });
    const data = join(cwd, ".gatehouse");
    const first = await gatehouse(["run", "-p", "hi"], { cwd });
    assert.equal(first.code, 0, first.stderr);

    const shell = await readerProcess(join(data, "gatehouse.db"));
    try {
      const blocked = await gatehouse(["run", "-p", "tell me the secret"], { cwd });
      assert.equal(blocked.code, 3, blocked.stderr);
      assert.ok(!`${blocked.stdout}${blocked.stderr}`.includes(SECRET), "the secret is shown nowhere");
      assert.match(blocked.stderr, NOTICE);
      assert.equal(blocked.stderr.match(new RegExp(NOTICE.source, "gm"))?.length, 1, "said once");
      assert.notDeepEqual(await filesHolding(data, SECRET), [], "the limit: the files hold it while the shell reads");

      const audit = await gatehouse(["audit", "--json"], { cwd });
      assert.equal(audit.code, 0, audit.stderr);
      assert.match(audit.stderr, NOTICE, "still held: the next command says so too");
      const rows = JSON.parse(audit.stdout) as AuditRow[];
      assert.deepEqual(
        rows.filter((r) => r.hook === "scrub").map((r) => [r.pluginId, r.outcome, r.category]),
        [["gatehouse", "error", "files-pinned"]],
      );
    } finally {
      await shell.release();
    }

    const after = await gatehouse(["audit", "--json"], { cwd });
    assert.equal(after.code, 0, after.stderr);
    assert.equal(after.stderr, "", "nothing held any more");
    assert.deepEqual(await filesHolding(data, SECRET), [], "the next command removed it");
    const rows = JSON.parse(after.stdout) as AuditRow[];
    assert.deepEqual(
      rows.filter((r) => r.hook === "scrub").map((r) => [r.outcome, r.category]),
      [
        ["error", "files-pinned"],
        ["pass", "files-cleaned"],
      ],
    );
  });
});
