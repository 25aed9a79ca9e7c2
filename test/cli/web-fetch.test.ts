// WebFetch: offered only when gatehouse.json sets tools.webFetch; an HTTP GET whose HTML arrives as
// text, capped in size; hooks matching WebFetch fire; local networks are refused unless allowed.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { classifyAddress } from "../../src/core/address.js";
import { gatehouse, tempProjects } from "./helpers.js";

// Tools ask in default mode and nobody can answer here (docs/permissions.md): a rule lets them run.
const ALLOW_ALL = { allow: ["Bash", "Write", "Edit", "MultiEdit", "NotebookEdit", "WebFetch", "Agent"] };

describe("WebFetch", { concurrency: 3 }, () => {
  const fresh = tempProjects();
  let server: Server;
  let base = "";
  before(async () => {
    server = createServer((req, res) => {
      if (req.url === "/big") {
        res.writeHead(200, { "content-type": "text/plain" });
        res.end("x".repeat(50_000));
        return;
      }
      if (req.url === "/away") {
        res.writeHead(302, { location: "https://example.org/elsewhere" });
        res.end();
        return;
      }
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(
        "<html><head><script>steal()</script></head><body><h1>Release notes</h1><p>Version <b>2.0</b> ships today.</p></body></html>",
      );
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  const script = (path: string) => ({
    runs: [
      {
        turns: [
          { toolCalls: [{ name: "WebFetch", input: { url: `${base}${path}`, prompt: "what version?" } }] },
          { text: "{{lastToolResult}}" },
        ],
      },
    ],
  });
  const project = (path: string, webFetch: object | undefined) =>
    fresh({
      "s.json": script(path),
      "gatehouse.json": {
        model: "scripted:s.json",
        permissions: ALLOW_ALL,
        ...(webFetch ? { tools: { webFetch } } : {}),
        hooks: {
          PreToolUse: [
            { matcher: "WebFetch", hooks: [{ type: "command", command: 'cat > "$CLAUDE_PROJECT_DIR/pre.json"' }] },
          ],
        },
      },
    });

  test("HTML arrives as text, scripts dropped; a PreToolUse hook matching WebFetch sees url and prompt", async () => {
    const cwd = await project("/notes", { allowPrivateNetwork: true });
    const r = await gatehouse(["run", "-p", "go"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /RELEASE NOTES/);
    assert.match(r.stdout, /Version 2\.0 ships today\./);
    assert.doesNotMatch(r.stdout, /steal|<p>/);
    const pre = JSON.parse(readFileSync(join(cwd, "pre.json"), "utf8")) as { tool_input: unknown };
    assert.deepEqual(pre.tool_input, { url: `${base}/notes`, prompt: "what version?" });
  });

  test("the body is cut at maxBytes, and a redirect to another host is reported, not followed", async () => {
    const big = await gatehouse(["run", "-p", "go"], {
      cwd: await project("/big", { allowPrivateNetwork: true, maxBytes: 1000 }),
    });
    assert.equal(big.code, 0, big.stderr);
    assert.match(big.stdout, /^x{1000}\n\[…the page was cut at 1000 bytes\]/);
    const away = await gatehouse(["run", "-p", "go"], { cwd: await project("/away", { allowPrivateNetwork: true }) });
    assert.match(away.stdout, /REDIRECT DETECTED: .* redirects to another host: https:\/\/example\.org\/elsewhere/);
  });

  test("not offered unless configured; local networks refused unless allowPrivateNetwork", async () => {
    const off = await gatehouse(["run", "-p", "go"], { cwd: await project("/notes", undefined) });
    assert.equal(off.code, 0, off.stderr);
    assert.match(off.stdout, /unknown tool|not available|WebFetch/i);
    assert.doesNotMatch(off.stdout, /Release notes/i);
    const refused = await gatehouse(["run", "-p", "go"], { cwd: await project("/notes", {}) });
    assert.match(refused.stdout, /does not fetch 127\.0\.0\.1: it is an address of a local or private network/);
    for (const a of ["127.0.0.1", "10.1.2.3", "169.254.169.254", "192.168.0.1", "::1", "fd00::1", "::ffff:10.0.0.1"])
      assert.notEqual(classifyAddress(a), "public", a);
    for (const a of ["93.184.216.34", "2606:4700::1111"]) assert.equal(classifyAddress(a), "public", a);
  });
});
