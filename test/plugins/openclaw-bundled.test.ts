import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { ON_DEMAND_TARBALLS, unpackOnDemand } from "../../scripts/on-demand.js";
import { testGatehouse } from "../runtime/helpers.js";

/**
 * OpenClaw's bundled extensions (npm `openclaw`, ON_DEMAND_TARBALLS' version, `dist/extensions/*`),
 * each loaded as it ships through Gatehouse's OpenClaw adapter, with only the few runtime
 * dependencies ON_DEMAND_TARBALLS lists beside it (not OpenClaw's whole tree). Per extension: loaded or not (and why), and what it registered. The expected table is
 * fixtures/openclaw/bundled-expected.json (docs/plugins.md shows it); a change fails here.
 * Runs under Node 24 in CI (.ci/run). After a deliberate change (a new OpenClaw version, an adapter
 * feature), GATEHOUSE_WRITE_EXPECTED=1 rewrites the table; review its diff.
 */

const EXPECTED = new URL("./fixtures/openclaw/bundled-expected.json", import.meta.url);

interface Outcome {
  readonly status: string;
  readonly reason?: string;
  readonly hooks?: string[];
  readonly tools?: string[];
  readonly commands?: string[];
}

/** Why a load failed, without the machine's paths: the missing package, else the error's first words. */
function reasonOf(message: string): string {
  const missing = /Cannot find (?:package|module) '([^']+)'/.exec(message);
  if (missing) return `missing package ${missing[1]}`;
  if (/Directory import/.test(message)) return "directory import (ESM resolution)";
  return message.replace(/\/\S+/g, "<path>").slice(0, 120);
}

// OpenClaw's undici 8 needs Node 22 or later; the first run also downloads (npm pack, npm install).
const NODE_MAJOR = Number(process.versions.node.split(".")[0]);
const options = {
  timeout: 600_000,
  ...(NODE_MAJOR < 22 ? { skip: `OpenClaw ${ON_DEMAND_TARBALLS.openclaw.version} needs Node 22 or later` } : {}),
};

test(
  "every bundled OpenClaw extension loads or fails (with its reason) as the committed table says; a loaded tool runs in a run and a loaded command answers",
  options,
  async () => {
    const dir = join(await unpackOnDemand("openclaw"), "dist", "extensions");
    // OpenClaw's extensions keep their files under ~/.openclaw: a home of the test's own.
    const home = mkdtempSync(join(tmpdir(), "gatehouse-openclaw-home-"));
    const realHome = process.env.HOME;
    process.env.HOME = home;
    after(() => {
      process.env.HOME = realHome;
      rmSync(home, { recursive: true, force: true });
    });
    const names = readdirSync(dir).sort();
    const { gatehouse } = testGatehouse(
      {
        runs: [
          { turns: [{ toolCalls: [{ name: "wiki_status", input: {} }] }, { text: "checked" }] },
          { turns: [{ text: "model answered" }] },
        ],
      },
      {
        pluginEntries: names.map((name) => ({ path: join(dir, name) })),
        permissions: { allow: ["wiki_status"] },
      },
    );
    await gatehouse.ready();
    const actual: Record<string, Outcome> = {};
    const byName = (source: string) =>
      names.find((n) => source === join(dir, n) || source.startsWith(`${join(dir, n)}/`));
    for (const info of gatehouse.plugins.list()) {
      const name = byName(info.source) ?? info.id;
      const errors = gatehouse.plugins.diagnostics.filter(
        (d) => d.level === "error" && (d.pluginId === info.id || d.pluginId === info.source),
      );
      actual[name] =
        info.status === "loaded"
          ? {
              status: "loaded",
              hooks: gatehouse.engine
                .registrations()
                .filter((r) => r.pluginId === info.id)
                .map((r) => r.hook)
                .sort(),
              tools: [...gatehouse.plugins.tools.values()].filter((t) => t.pluginId === info.id).map((t) => t.name),
              commands: [...gatehouse.plugins.commands.entries()]
                .filter(([, c]) => (c as { pluginId?: string }).pluginId === info.id)
                .map(([n]) => n),
            }
          : { status: info.status, reason: reasonOf(errors.map((e) => e.message).join("; ")) };
    }
    const toolRun = await gatehouse.run({ prompt: "wiki status?" });
    const command = await gatehouse.run({ prompt: "/voice" });
    // End to end: memory-wiki's tool, called by the model in a run, answers from its (fresh) vault;
    // talk-voice's slash command answers without the model.
    const [result] = (await gatehouse.store.runMessages(toolRun.runId))
      .flatMap((m) => m.parts)
      .filter((p) => p.type === "tool_result");
    const text = JSON.stringify(result?.type === "tool_result" ? result.output : undefined);
    assert.match(text, /Wiki vault mode: isolated/);
    assert.ok(text.includes(join(home, ".openclaw", "wiki")), text);
    assert.equal(toolRun.reply, "checked");
    assert.match(command.reply ?? "", /^Talk voice is not configured\./);
    await gatehouse.close();
    assert.deepEqual(Object.keys(actual).sort(), names, "one row per bundled extension");
    if (process.env.GATEHOUSE_WRITE_EXPECTED) {
      const { writeFileSync } = await import("node:fs");
      writeFileSync(EXPECTED, `${JSON.stringify(actual, null, 2)}\n`);
    }
    assert.deepEqual(actual, JSON.parse(readFileSync(EXPECTED, "utf8")));
  },
);
