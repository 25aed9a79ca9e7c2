import assert from "node:assert/strict";
import { test } from "node:test";
import { hostInDomain, normalizeHostname } from "../../src/core/hostname.js";

test("a host name is compared case-folded, without its trailing dot, in IDNA form", () => {
  assert.equal(normalizeHostname("Example.COM."), "example.com");
  assert.equal(normalizeHostname("bücher.example"), "xn--bcher-kva.example");
  assert.equal(normalizeHostname("[::FFFF:7f00:1]"), "::ffff:7f00:1");
  assert.equal(normalizeHostname("."), undefined);
});

test("a domain covers itself and its subdomains; a *. domain only its subdomains", () => {
  assert.equal(hostInDomain("API.github.com.", "github.com"), true);
  assert.equal(hostInDomain("github.com", "GitHub.com."), true);
  assert.equal(hostInDomain("evilgithub.com", "github.com"), false);
  assert.equal(hostInDomain("github.com", "*.github.com"), false);
  assert.equal(hostInDomain("raw.github.com", "*.github.com"), true);
});
