// WebFetch's address policy against real local servers: every spelling of loopback that reaches
// the check (IPv4-mapped and other IPv6 forms, decimal, octal, hex and short IPv4), a name that
// resolves to loopback, a trailing-dot name, cloud metadata, and each redirect hop. Each refusal
// has a control in which a setting lets the same request through, so the check is what stopped it.
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo, LookupFunction } from "node:net";
import { after, before, describe, test } from "node:test";
import { classifyAddress } from "../../src/core/address.js";
import { createWebFetchTool, type WebFetchOptions } from "../../src/tools/builtin/web-fetch.js";
import { ToolError } from "../../src/tools/types.js";
import { toolCtx } from "./helpers.js";

/** A DNS stand-in: each name's answers in turn (the last one repeats); every question recorded. */
function fakeDns(answers: Record<string, string[]>): { lookup: LookupFunction; asked: string[] } {
  const asked: string[] = [];
  const count = new Map<string, number>();
  const lookup: LookupFunction = (host, options, callback) => {
    asked.push(host);
    const list = answers[host] ?? [];
    const n = count.get(host) ?? 0;
    count.set(host, n + 1);
    const address = list[Math.min(n, list.length - 1)];
    if (address === undefined) {
      const e: NodeJS.ErrnoException = new Error(`${host} not found`);
      e.code = "ENOTFOUND";
      return callback(e, "", 0);
    }
    const family = address.includes(":") ? 6 : 4;
    if (options.all)
      (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address, family }]);
    else callback(null, address, family);
  };
  return { lookup, asked };
}

const fetchWith = (url: string, options: WebFetchOptions = {}) =>
  createWebFetchTool({ timeoutMs: 5_000, ...options }).execute({ url, prompt: "?" }, toolCtx(process.cwd()));

const refused = (pattern: RegExp) => (e: unknown) => e instanceof ToolError && pattern.test(e.message);

describe("WebFetch's address policy", () => {
  let server: Server;
  let port = 0;
  const seen: string[] = [];
  before(async () => {
    server = createServer((req: IncomingMessage, res) => {
      seen.push(req.url ?? "");
      const redirect = /^\/redirect\/(\d+)$/.exec(req.url ?? "");
      if (redirect) {
        res.writeHead(Number(redirect[1]), { location: "/landed" });
        return res.end();
      }
      const away = /^\/away\/(\d+)$/.exec(req.url ?? "");
      if (away) {
        res.writeHead(Number(away[1]), { location: `http://[::ffff:127.0.0.1]:${port}/inside` });
        return res.end();
      }
      res.writeHead(200, { "content-type": "text/plain" });
      res.end(`served ${req.url}`);
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  test("IPv4-mapped loopback, [::ffff:127.0.0.1] and [::ffff:7f00:1], is refused before any request; allowPrivateNetwork lets it through", async () => {
    for (const host of ["[::ffff:127.0.0.1]", "[::ffff:7f00:1]"]) {
      const before = seen.length;
      await assert.rejects(
        fetchWith(`http://${host}:${port}/mapped`),
        refused(/local or private network \(loopback\)/),
      );
      assert.equal(seen.length, before, `${host}: no request reached the server`);
      const r = await fetchWith(`http://${host}:${port}/mapped`, { allowPrivateNetwork: true });
      assert.equal(r.result, "served /mapped", `${host}: the control reaches it`);
    }
  });

  test("every IPv4 spelling of loopback reaches the check as 127.0.0.1 and is refused; allowPrivateHosts naming 127.0.0.1 lets each through", async () => {
    for (const spelling of ["2130706433", "0177.0.0.1", "0x7f.1", "127.1", "0x7f000001"]) {
      const url = `http://${spelling}:${port}/spelt`;
      assert.equal(new URL(url).hostname, "127.0.0.1", `${spelling}: WHATWG URL parsing normalises it`);
      assert.equal(classifyAddress(spelling), "loopback", `${spelling}: ipaddr.js reads it unnormalised too`);
      const before = seen.length;
      await assert.rejects(fetchWith(url), refused(/does not fetch 127\.0\.0\.1: .*\(loopback\)/));
      assert.equal(seen.length, before);
      assert.equal((await fetchWith(url, { allowPrivateHosts: ["127.0.0.1"] })).result, "served /spelt");
    }
  });

  test("IPv4-compatible, SIIT, NAT64 and 6to4 forms of private addresses are refused as the address they carry; public ones are not", () => {
    const cases: [string, string][] = [
      ["::127.0.0.1", "loopback"],
      ["::ffff:0:127.0.0.1", "loopback"],
      ["64:ff9b::127.0.0.1", "loopback"],
      ["64:ff9b::10.0.0.1", "private"],
      ["64:ff9b:1::a00:1", "NAT64 local-use"],
      ["2002:7f00:1::", "loopback"],
      ["2002:a9fe:a9fe::1", "cloud metadata"],
      ["::ffff:169.254.169.254", "cloud metadata"],
      ["fd00:ec2::254", "cloud metadata"],
      ["100.64.0.1", "carrier-grade NAT"],
      ["fe80::1", "link-local"],
      ["fc00::1", "unique-local"],
      ["ff02::1", "multicast"],
      ["224.0.0.1", "multicast"],
      ["0.0.0.0", "unspecified"],
      ["::", "unspecified"],
      ["::1", "loopback"],
      // Controls: public addresses, however carried.
      ["93.184.215.14", "public"],
      ["64:ff9b::93.184.215.14", "public"],
      ["::ffff:93.184.215.14", "public"],
      ["2606:4700::1111", "public"],
    ];
    for (const [address, expected] of cases) assert.equal(classifyAddress(address), expected, address);
  });

  test("the IPv6 forms arrive at the tool refused, with no connection attempted", async () => {
    for (const host of ["[::127.0.0.1]", "[64:ff9b::127.0.0.1]", "[2002:7f00:1::]", "[fd00:ec2::254]"])
      await assert.rejects(
        fetchWith(`http://${host}:${port}/v6`),
        refused(/does not fetch .*local or private network/),
      );
  });

  test("cloud metadata is refused even with allowPrivateNetwork, by address and by name (not even resolved); naming it lets it through", async () => {
    await assert.rejects(
      fetchWith("http://169.254.169.254/latest/meta-data/", { allowPrivateNetwork: true }),
      refused(/\(cloud metadata\)/),
    );
    const dns = fakeDns({ "metadata.google.internal": [`127.0.0.1`] });
    await assert.rejects(
      fetchWith(`http://Metadata.Google.Internal.:${port}/computeMetadata/`, {
        allowPrivateNetwork: true,
        lookup: dns.lookup,
      }),
      refused(/\(cloud metadata\)/),
    );
    assert.deepEqual(dns.asked, [], "the name was refused before any lookup");
    const named = fakeDns({ "metadata.google.internal": ["127.0.0.1"] });
    const r = await fetchWith(`http://metadata.google.internal:${port}/computeMetadata/`, {
      allowPrivateHosts: ["metadata.google.internal"],
      lookup: named.lookup,
    });
    assert.equal(r.result, "served /computeMetadata/");
  });

  test("a name that resolves to loopback is refused; allowPrivateHosts naming it lets it through", async () => {
    const dns = fakeDns({ "intranet.test": ["127.0.0.1"] });
    const before = seen.length;
    await assert.rejects(
      fetchWith(`http://intranet.test:${port}/named`, { lookup: dns.lookup }),
      refused(/it resolved to an address of a local or private network \(loopback\)/),
    );
    assert.equal(seen.length, before);
    const r = await fetchWith(`http://intranet.test:${port}/named`, {
      lookup: dns.lookup,
      allowPrivateHosts: ["intranet.test"],
    });
    assert.equal(r.result, "served /named");
  });

  test("a trailing-dot name is resolved as written and refused; an allowPrivateHosts entry without the dot matches it", async () => {
    const dns = fakeDns({ "localhost.": ["127.0.0.1"] });
    await assert.rejects(fetchWith(`http://LocalHost.:${port}/dot`, { lookup: dns.lookup }), refused(/\(loopback\)/));
    assert.ok(dns.asked.includes("localhost."));
    const r = await fetchWith(`http://LocalHost.:${port}/dot`, {
      lookup: dns.lookup,
      allowPrivateHosts: ["localhost"],
    });
    assert.equal(r.result, "served /dot");
  });

  for (const status of [301, 302, 307, 308])
    test(`a ${status} redirect is checked at its hop: a host that resolves to an allowed address, then to another loopback address, is refused at the second hop`, async () => {
      const allowed = { allowPrivateHosts: ["127.0.0.1"] };
      // The host resolves to 127.0.0.1 (allowed) for the check and the connection of the first hop, then to 127.0.0.2.
      const dns = fakeDns({ "hop.test": ["127.0.0.1", "127.0.0.1", "127.0.0.2"] });
      const before = seen.length;
      await assert.rejects(
        fetchWith(`http://hop.test:${port}/redirect/${status}`, { ...allowed, lookup: dns.lookup }),
        refused(/does not fetch hop\.test: it resolved to an address of a local or private network \(loopback\)/),
      );
      assert.deepEqual(seen.slice(before), [`/redirect/${status}`], "the first hop was served, the second never sent");
      // Control: the same redirect whose host keeps resolving to the allowed address lands.
      const steady = fakeDns({ "hop.test": ["127.0.0.1"] });
      const r = await fetchWith(`http://hop.test:${port}/redirect/${status}`, { ...allowed, lookup: steady.lookup });
      assert.equal(r.result, "served /landed");
    });

  test("a redirect from an allowed server to [::ffff:127.0.0.1] is reported, not followed, and fetching it is refused", async () => {
    const dns = fakeDns({ "allowed.test": ["127.0.0.1"] });
    const before = seen.length;
    const r = await fetchWith(`http://allowed.test:${port}/away/302`, {
      allowPrivateHosts: ["allowed.test"],
      lookup: dns.lookup,
    });
    assert.match(r.result, /REDIRECT DETECTED: .* redirects to another host: http:\/\/\[::ffff:7f00:1\]:\d+\/inside/);
    assert.deepEqual(seen.slice(before), ["/away/302"]);
    await assert.rejects(
      fetchWith(`http://[::ffff:7f00:1]:${port}/inside`, { allowPrivateHosts: ["allowed.test"], lookup: dns.lookup }),
      refused(/\(loopback\)/),
    );
    assert.deepEqual(seen.slice(before), ["/away/302"], "the loopback URL was never requested");
  });
});
