// Signals and children through the CLI: SIGTERM and SIGHUP cancel and record the run, then exit;
// a second Ctrl-C exits 130 at once after SIGKILLing every process group Gatehouse started;
// MCP servers die on a handshake timeout and at exit.
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { gatehouse, tempProjects } from "./helpers.js";
import { fifoLine, makeFifo, parentOf, pidsIn, reap, runStatuses, survivors, treeProject } from "./process-helpers.js";

const MCP_FIXTURE = fileURLToPath(new URL("fixtures/mcp-echo.mjs", import.meta.url));

/**
 * An MCP server that ignores SIGTERM (inherited by the real server it execs) and has started a
 * child that ignores it too; both write their pids to `file`.
 */
const stubbornMcpServer = (file: string, exec: string) => ({
  command: "/bin/sh",
  args: ["-c", `trap '' TERM; echo $$ >> ${file}; (trap '' TERM; sleep 1000) & echo $! >> ${file}; exec ${exec}`],
});

describe("signals and the processes gatehouse run started", { concurrency: 3 }, () => {
  const fresh = tempProjects();

  for (const signal of ["SIGTERM", "SIGHUP"] as const) {
    test(`${signal} during a Bash call: its process group is killed, the run recorded as cancelled, then gatehouse ends by ${signal}`, async () => {
      const cwd = await treeProject(fresh);
      const started = fifoLine(makeFifo(cwd));
      const run = gatehouse(["run", "-p", "go", "--session", "s-1"], { cwd });
      const r = await Promise.race([run, started.then(() => undefined)]);
      assert.equal(r, undefined, "the Bash call started before the run ended");
      const pids = pidsIn(join(cwd, "pids"));
      assert.equal(pids.length, 3);
      try {
        // The Bash tool's shell is a child of gatehouse.
        process.kill(parentOf(pids[0] as number), signal);
        const done = await run;
        assert.equal(done.signal, signal, `exit ${done.code}: ${done.stderr}`);
        assert.match(done.stderr, new RegExp(`gatehouse: ${signal}: cancelling the run`));
        assert.deepEqual(await survivors(pids), [], "no process of the Bash call is left");
        assert.deepEqual(await runStatuses(cwd, "s-1"), ["cancelled"]);
      } finally {
        reap(pids);
      }
    });
  }

  test("a second Ctrl-C exits 130 at once, SIGKILLing a Bash child and an MCP server that ignore SIGTERM first", async () => {
    const server = stubbornMcpServer("mcp-pids", `${process.execPath} ${MCP_FIXTURE}`);
    const cwd = await treeProject(fresh, { mcpServers: { keeper: server } });
    const started = fifoLine(makeFifo(cwd));
    let sent = 0;
    const run = gatehouse(["run", "-p", "go"], {
      cwd,
      onStderr: (soFar, c) => {
        // Ctrl-C again as soon as the first one is acknowledged: the tree is still being stopped.
        if (sent === 1 && soFar.includes("cancelling the run")) sent += Number(c.kill("SIGINT"));
      },
    });
    await started;
    const pids = [...pidsIn(join(cwd, "pids")), ...pidsIn(join(cwd, "mcp-pids"))];
    assert.equal(pids.length, 5);
    try {
      process.kill(parentOf(pids[0] as number), "SIGINT");
      sent = 1;
      const r = await run;
      assert.equal(sent, 2);
      assert.equal(r.code, 130, r.stderr);
      // The Bash tool's own SIGKILL would come a second after its SIGTERM; the process exited before.
      assert.deepEqual(await survivors(pids, 500), [], "the processes that ignore SIGTERM are gone");
    } finally {
      reap(pids);
    }
  });

  test("an MCP server that never answers the handshake is killed with its children at the timeout (MCP_TIMEOUT)", async () => {
    const cwd = await fresh({
      "gatehouse.json": { mcpServers: { stuck: stubbornMcpServer("mcp-pids", "sleep 1000") } },
    });
    const r = await gatehouse(["run", "-p", "hi", "--model", "scripted:echo"], { cwd, env: { MCP_TIMEOUT: "500" } });
    const pids = pidsIn(join(cwd, "mcp-pids"));
    try {
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /MCP server "stuck".*no answer to the MCP handshake within 500 ms/);
      assert.equal(pids.length, 2);
      assert.deepEqual(await survivors(pids, 500), [], "nothing of the server is left once gatehouse exited");
    } finally {
      reap(pids);
    }
  });

  test("an MCP server that ignores SIGTERM and the end of its input is gone, with its children, when gatehouse exits", async () => {
    const cwd = await fresh({
      "gatehouse.json": {
        mcpServers: { keeper: stubbornMcpServer("mcp-pids", `${process.execPath} ${MCP_FIXTURE}`) },
      },
    });
    const r = await gatehouse(["run", "-p", "hi", "--model", "scripted:echo"], { cwd });
    const pids = pidsIn(join(cwd, "mcp-pids"));
    try {
      assert.equal(r.code, 0, r.stderr);
      assert.equal(pids.length, 2);
      assert.deepEqual(await survivors(pids, 500), []);
    } finally {
      reap(pids);
    }
  });
});
