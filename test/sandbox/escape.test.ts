import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { sandboxAvailability } from "../../src/sandbox/runtime.js";
import { CANARY } from "./escape-corpus.js";

// The escape corpus (test/sandbox/escape-corpus.ts) runs in a process of its own that stands for
// Gatehouse — a provider key holding the canary is in its environment — once with the sandbox on
// and once off, both at once. Every case must hold with the sandbox on and must show its canary
// with it off: a case that cannot get out even unsandboxed proves nothing.
const availability = sandboxAvailability();
const skip = availability.available ? false : `the sandbox is unavailable here: ${availability.reason}`;
const corpus = fileURLToPath(new URL("./escape-corpus.ts", import.meta.url));

async function runCorpus(mode: "on" | "off"): Promise<Record<string, string>> {
  const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", corpus, mode], {
    env: { ...process.env, OPENAI_API_KEY: `${CANARY}-provider-key` },
    maxBuffer: 16 * 1024 * 1024,
  });
  return JSON.parse(stdout.trim().split("\n").at(-1) as string) as Record<string, string>;
}

describe("escape corpus: the Bash tool's sandbox", { skip }, () => {
  const results = skip ? undefined : Promise.all([runCorpus("on"), runCorpus("off")]);

  it("every way out that works unsandboxed shows its canary (the cases are real)", async () => {
    const [, off] = await (results as Promise<[Record<string, string>, Record<string, string>]>);
    const silent = Object.entries(off).filter(
      ([name, evidence]) => name !== "metadata address" && !evidence.includes(CANARY),
    );
    assert.deepEqual(silent, [], "these cases show nothing even without the sandbox");
    assert.ok(Object.keys(off).length >= 18);
  });

  it("no way out works with the sandbox on", async () => {
    const [on] = await (results as Promise<[Record<string, string>, Record<string, string>]>);
    const escaped = Object.entries(on).filter(
      ([name, evidence]) => !name.startsWith("control") && evidence.includes(CANARY),
    );
    assert.deepEqual(escaped, [], "these cases got out of the sandbox");
  });

  it("the metadata address is refused inside the sandbox, and the same proxy path reaches a host a setting names", async () => {
    const [on] = await (results as Promise<[Record<string, string>, Record<string, string>]>);
    assert.match(on["metadata address"] as string, /^000\ndirect-refused-\d+/);
    assert.match(on["control: an allowed loopback host is reachable through the proxy"] as string, new RegExp(CANARY));
  });
});
