// WebFetch(domain:…) permission rules in `gatehouse run` (docs/permissions.md): a rule matches the
// fetched URL's host and its subdomains, never a look-alike host; an allow rule lets the fetch run
// where nobody could be asked, and a deny rule refuses it before anything is fetched.
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { gatehouse, tempProjects } from "./helpers.js";

describe("WebFetch(domain:…) rules", () => {
  const fresh = tempProjects();
  let server: Server;
  let base = "";
  let hits = 0;
  before(async () => {
    server = createServer((_req, res) => {
      hits++;
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("fetched fine");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  test("an allow rule on the host runs the fetch; a deny rule on a domain refuses its subdomain; a look-alike host is neither", async () => {
    const fetch = (url: string) => ({ toolCalls: [{ name: "WebFetch", input: { url, prompt: "read it" } }] });
    const cwd = await fresh({
      "s.json": {
        runs: [
          {
            turns: [
              fetch(`${base}/notes`),
              fetch("https://docs.example.com/x"),
              fetch("https://notexample.com/x"),
              { text: "done" },
            ],
          },
        ],
      },
      "gatehouse.json": {
        model: "scripted:s.json",
        tools: { webFetch: { allowPrivateNetwork: true } },
        permissions: { allow: ["WebFetch(domain:127.0.0.1)"], deny: ["WebFetch(domain:example.com)"] },
      },
    });
    const r = await gatehouse(["run", "-p", "go", "--json"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { permissionDenials: { toolName: string; reason: string; rule?: string }[] };
    assert.equal(hits, 1, "the allowed fetch reached the server");
    assert.deepEqual(
      out.permissionDenials.map((d) => [d.toolName, d.reason, d.rule]),
      [
        ["WebFetch", "rule", "WebFetch(domain:example.com)"],
        ["WebFetch", "nobody", undefined],
      ],
    );
  });
});
