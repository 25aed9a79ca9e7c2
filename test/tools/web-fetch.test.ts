// WebFetch refuses the machine's own networks where the connection is made, not only when it
// first resolves the host: a DNS answer that turns private between the two (rebinding) is refused.
import assert from "node:assert/strict";
import { createServer, type LookupFunction, type Server } from "node:net";
import { after, before, describe, test } from "node:test";
import { createWebFetchTool } from "../../src/tools/builtin/web-fetch.js";
import { ToolError } from "../../src/tools/types.js";
import { toolCtx } from "./helpers.js";

/** A DNS stand-in that answers a public address first, then loopback: the rebinding attack. */
function rebindingLookup(): { lookup: LookupFunction; answers: string[] } {
  const answers: string[] = [];
  const lookup: LookupFunction = (_host, options, callback) => {
    const address = answers.length === 0 ? "93.184.215.14" : "127.0.0.1";
    answers.push(address);
    if (options.all)
      (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address, family: 4 }]);
    else callback(null, address, 4);
  };
  return { lookup, answers };
}

describe("WebFetch against DNS rebinding", () => {
  let server: Server;
  let port = 0;
  let connections = 0;
  before(async () => {
    server = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    port = (server.address() as { port: number }).port;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  test("a host that resolves public when checked and loopback when connecting is refused before any connection", async () => {
    const { lookup, answers } = rebindingLookup();
    const tool = createWebFetchTool({ lookup, timeoutMs: 5_000 });
    const before = connections;
    await assert.rejects(
      tool.execute({ url: `http://rebind.example:${port}/`, prompt: "?" }, toolCtx(process.cwd())),
      (e: unknown) => e instanceof ToolError && /resolved to an address of a local or private network/.test(e.message),
    );
    assert.deepEqual(answers, ["93.184.215.14", "127.0.0.1"], "checked once, then resolved again to connect");
    assert.equal(connections, before, "no connection reached the loopback server");
  });

  test("with allowPrivateNetwork the same answer connects (the guard is what refused it)", async () => {
    const { lookup } = rebindingLookup();
    const tool = createWebFetchTool({ lookup, timeoutMs: 5_000, allowPrivateNetwork: true });
    const before = connections;
    // The stand-in server closes the socket at once: the fetch fails, but only after connecting.
    await assert.rejects(tool.execute({ url: `http://rebind.example:${port}/`, prompt: "?" }, toolCtx(process.cwd())));
    assert.equal(connections, before + 1);
  });
});
