// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these tests spell .mcp.json's literal ${VAR} syntax
import assert from "node:assert/strict";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  connectMcpServers,
  contentToText,
  expandEnvVars,
  type McpConnection,
  type McpLogger,
  McpServersConfigSchema,
} from "../../src/tools/mcp.js";
import { mcpToolName } from "../../src/tools/mcp-name.js";
import type { Tool } from "../../src/tools/types.js";
import { createFixtureServer } from "./fixtures/mcp-server.mjs";
import { processIsDead, tempDir, toolCtx, toolError } from "./helpers.js";

const FIXTURE = fileURLToPath(new URL("./fixtures/mcp-server.mjs", import.meta.url));
const fixtureServer = (extra: object = {}) => ({ command: process.execPath, args: [FIXTURE, "--stdio"], ...extra });

function tool(conn: McpConnection, name: string): Tool {
  const found = conn.tools.find((t) => t.name === name);
  assert.ok(found, `tool ${name} is listed`);
  return found;
}

function recordingLogger(): McpLogger & { warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, warn: (_obj, msg) => warnings.push(msg), debug: () => {} };
}

describe("mcpServers config schema", () => {
  test("accepts a stdio server and a url server in Claude Code's shape", () => {
    const parsed = McpServersConfigSchema.parse({
      fs: { command: "npx", args: ["-y", "server-fs"], env: { TOKEN: "x" } },
      remote: { type: "http", url: "https://example.com/mcp", headers: { Authorization: "Bearer ${TOKEN}" } },
      legacy: { type: "sse", url: "http://localhost:3000/sse" },
    });
    assert.equal(parsed.fs?.command, "npx");
  });

  test("needs exactly one of command or url", () => {
    for (const bad of [{}, { command: "x", url: "https://a.b/" }]) {
      const result = McpServersConfigSchema.safeParse({ s: bad });
      assert.equal(result.success, false);
      assert.match(result.error?.issues[0]?.message ?? "", /exactly one of "command" \(stdio\) or "url"/);
    }
  });

  test("rejects unknown keys, non-http urls, and fields or types that do not fit the form", () => {
    const bad = [
      { command: "x", bogus: 1 },
      { url: "ftp://a.b/" },
      { command: "x", type: "http" },
      { url: "https://a.b/", type: "stdio" },
      { url: "https://a.b/", args: ["a"] },
      { command: "x", headers: { a: "b" } },
    ];
    for (const server of bad)
      assert.equal(McpServersConfigSchema.safeParse({ s: server }).success, false, JSON.stringify(server));
  });

  test("a url with ${VAR} passes the schema and is checked after expansion", () => {
    assert.equal(McpServersConfigSchema.safeParse({ s: { url: "${BASE_URL}/mcp" } }).success, true);
  });

  test("expandEnvVars expands ${VAR} and ${VAR:-default} and reports unset variables", () => {
    assert.deepEqual(expandEnvVars("a=${A} b=${B:-dflt} c=${C}", { A: "1" }), {
      value: "a=1 b=dflt c=${C}",
      missing: ["C"],
    });
  });

  test("tool names are mcp__<server>__<tool> with other characters replaced by _", () => {
    assert.equal(mcpToolName("my.server", "get data"), "mcp__my_server__get_data");
  });
});

describe("MCP round trip over stdio", () => {
  let conn: McpConnection;
  let projectDir: string;

  before(async () => {
    projectDir = await realpath(await mkdtemp(path.join(tmpdir(), "gatehouse-mcp-")));
    process.env.GATEHOUSE_TEST_SECRET = "must-not-leak";
    conn = await connectMcpServers(
      { fixture: fixtureServer({ env: { FIXTURE_VAR: "from-config" } }) },
      { cwd: projectDir },
    );
  });
  after(async () => {
    delete process.env.GATEHOUSE_TEST_SECRET;
    await conn.close();
    await rm(projectDir, { recursive: true, force: true });
  });

  test("connects without diagnostics and lists the server's tools as mcp__<server>__<tool>", () => {
    assert.deepEqual(conn.diagnostics, []);
    assert.deepEqual(conn.tools.map((t) => t.name).sort(), [
      "mcp__fixture__echo",
      "mcp__fixture__exit",
      "mcp__fixture__fail",
      "mcp__fixture__wait",
      "mcp__fixture__whereami",
    ]);
  });

  test("publishes the server's JSON Schema and description; readOnlyHint tools run in parallel", () => {
    const echo = tool(conn, "mcp__fixture__echo");
    assert.equal(echo.description, "Echoes the given text");
    const schema = echo.jsonSchema as {
      type: string;
      properties: Record<string, { type: string }>;
      required: string[];
    };
    assert.equal(schema.type, "object");
    assert.equal(schema.properties.text?.type, "string");
    assert.deepEqual(schema.required, ["text"]);
    assert.equal(echo.parallel, true);
    assert.equal(tool(conn, "mcp__fixture__fail").parallel, false);
    assert.equal(echo.inputSchema.safeParse({ text: "hi" }).success, true);
  });

  test("calling a tool returns the server's content blocks", async () => {
    const echo = tool(conn, "mcp__fixture__echo");
    const out = await echo.execute({ text: "hello" }, toolCtx(projectDir));
    assert.deepEqual(out, [{ type: "text", text: "echo: hello" }]);
    assert.equal(echo.toModelOutput?.(out), "echo: hello");
  });

  test("a result with isError is a ToolError carrying the server's text", async () => {
    const err = await toolError(
      tool(conn, "mcp__fixture__fail").execute({}, toolCtx(projectDir)),
      /^it failed on purpose$/,
    );
    assert.deepEqual(err.details, [{ type: "text", text: "it failed on purpose" }]);
  });

  test("invalid arguments come back as a ToolError, not a crash", async () => {
    await toolError(tool(conn, "mcp__fixture__echo").execute({ text: 42 }, toolCtx(projectDir)), /text/);
  });

  test("the server runs in the project directory with the config's env and without this process's secrets", async () => {
    const out = (await tool(conn, "mcp__fixture__whereami").execute({}, toolCtx(projectDir))) as [{ text: string }];
    const info = JSON.parse(out[0].text) as { cwd: string; fixtureVar: string; secret: string | null };
    assert.equal(info.cwd, projectDir);
    assert.equal(info.fixtureVar, "from-config");
    assert.equal(info.secret, null);
  });

  test("aborting the signal cancels a call in flight", async () => {
    const ac = new AbortController();
    const call = tool(conn, "mcp__fixture__wait").execute({}, toolCtx(projectDir, ac.signal));
    ac.abort();
    await toolError(call, /abort/i);
  });
});

describe("MCP server lifecycle and failures", () => {
  test("a server that fails to start is a diagnostic while the others still connect", async (t) => {
    const dir = await tempDir(t);
    const logger = recordingLogger();
    const conn = await connectMcpServers(
      {
        missing: { command: "gatehouse-no-such-command-xyz" },
        crashes: { command: process.execPath, args: ["-e", "console.error('boom: bad config'); process.exit(3)"] },
        needsEnv: { command: "x", args: ["${GATEHOUSE_TEST_UNSET_VAR}"] },
        good: fixtureServer(),
      },
      { cwd: dir, logger },
    );
    t.after(() => conn.close());
    const byServer = Object.fromEntries(conn.diagnostics.map((d) => [d.server, d.message]));
    assert.deepEqual(Object.keys(byServer).sort(), ["crashes", "missing", "needsEnv"]);
    assert.match(byServer.missing ?? "", /command not found: gatehouse-no-such-command-xyz/);
    assert.match(byServer.crashes ?? "", /exited before completing the MCP handshake.*boom: bad config/);
    assert.match(byServer.needsEnv ?? "", /missing environment variable: GATEHOUSE_TEST_UNSET_VAR/);
    assert.equal(logger.warnings.length, 3);
    const out = await tool(conn, "mcp__good__echo").execute({ text: "still here" }, toolCtx(dir));
    assert.equal(contentToText(out as never), "echo: still here");
  });

  test("a server that never answers initialize times out into a diagnostic", async (t) => {
    const dir = await tempDir(t);
    const conn = await connectMcpServers(
      { silent: { command: process.execPath, args: ["-e", "setInterval(() => {}, 1 << 30)"] } },
      { cwd: dir, startupTimeoutMs: 300 },
    );
    t.after(() => conn.close());
    assert.deepEqual(conn.tools, []);
    assert.match(conn.diagnostics[0]?.message ?? "", /no answer to the MCP handshake within 300 ms/);
  });

  test("close() stops the server process quietly and later calls fail clearly", async (t) => {
    const dir = await tempDir(t);
    const logger = recordingLogger();
    const conn = await connectMcpServers({ s: fixtureServer() }, { cwd: dir, logger });
    const out = (await tool(conn, "mcp__s__whereami").execute({}, toolCtx(dir))) as [{ text: string }];
    const { pid } = JSON.parse(out[0].text) as { pid: number };
    await conn.close();
    await conn.close();
    assert.equal(await processIsDead(pid), true);
    assert.deepEqual(logger.warnings, []);
    await toolError(tool(conn, "mcp__s__echo").execute({ text: "x" }, toolCtx(dir)), /not connected/);
  });

  test("a server that dies mid-session is logged and turns its calls into ToolErrors", async (t) => {
    const dir = await tempDir(t);
    const logger = recordingLogger();
    const conn = await connectMcpServers({ s: fixtureServer() }, { cwd: dir, logger });
    t.after(() => conn.close());
    await toolError(tool(conn, "mcp__s__exit").execute({}, toolCtx(dir)), /MCP server "s", tool exit: .*closed/i);
    await toolError(tool(conn, "mcp__s__echo").execute({ text: "x" }, toolCtx(dir)), /not connected/);
    assert.deepEqual(logger.warnings, ['MCP server "s" disconnected']);
  });

  test("an entry that skipped validation is a diagnostic and starts nothing", async (t) => {
    const dir = await tempDir(t);
    const conn = await connectMcpServers({ both: { command: "x", url: "https://a.b/" } }, { cwd: dir });
    assert.match(conn.diagnostics[0]?.message ?? "", /invalid config: .*exactly one of/);
  });
});

describe("MCP over Streamable HTTP", () => {
  let http: Server;
  let url: string;

  before(async () => {
    http = createServer(async (req, res) => {
      // Stateless mode: a fresh server and transport per request, as the SDK recommends.
      const server = createFixtureServer();
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on("close", () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res);
    });
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  });
  after(async () => {
    // The client's standalone SSE stream would keep close() waiting for its keep-alive to end.
    http.closeAllConnections();
    await new Promise<void>((resolve) => http.close(() => resolve()));
  });

  test("a url server connects and its tools can be called", async (t) => {
    const dir = await tempDir(t);
    const conn = await connectMcpServers({ web: { type: "http", url } }, { cwd: dir });
    t.after(() => conn.close());
    assert.deepEqual(conn.diagnostics, []);
    const out = await tool(conn, "mcp__web__echo").execute({ text: "over http" }, toolCtx(dir));
    assert.deepEqual(out, [{ type: "text", text: "echo: over http" }]);
  });

  test("a url server that cannot be reached is a diagnostic", async (t) => {
    const dir = await tempDir(t);
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const conn = await connectMcpServers({ gone: { type: "http", url: `http://127.0.0.1:${port}/mcp` } }, { cwd: dir });
    assert.equal(conn.tools.length, 0);
    assert.equal(conn.diagnostics[0]?.server, "gone");
    assert.match(conn.diagnostics[0]?.message ?? "", /fetch failed \(.*ECONNREFUSED/);
  });
});
