import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";

// `npm run soak` itself: one seed is not a soak, so `--seeds N` draws N fresh ones (issue 20).

const SOAK = fileURLToPath(new URL("../../harness/soak.ts", import.meta.url));

/** The soak command line as a child process; nothing else runs meanwhile, so waiting synchronously is fine. */
function soak(args: readonly string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ["--import", "tsx", SOAK, ...args], { encoding: "utf8" });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("npm run soak", () => {
  test("--seeds N runs the selection once per fresh seed, printing each seed, then R1's totals over all", async () => {
    const r = soak(["--only", "R1", "--seeds", "2", "--scenarios", "2"]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const seeds = [...r.stdout.matchAll(/^seed (\d+) \((\d) of 2\)( \(with PostgreSQL\))?$/gm)].map((m) =>
      Number(m[1]),
    );
    assert.equal(seeds.length, 2, r.stdout);
    assert.notEqual(seeds[0], seeds[1], "two different seeds");
    assert.equal(r.stdout.match(/^R1 scenarios run: 2 /gm)?.length, 2, "each seed ran the scenarios asked for");
    assert.match(
      r.stdout,
      new RegExp(
        `^R1 over 2 seeds \\(${seeds[0]}, ${seeds[1]}\\): 4 scenarios, \\d+ canaries blocked or rewritten, \\d+ controls, 0 leaks, 0 other failures, [\\d.]+ s$`,
        "m",
      ),
    );
  });

  test("--seed and --seeds together, or a --seeds that is not a count, are usage errors (exit 2)", async () => {
    for (const args of [
      ["--seed", "4", "--seeds", "2"],
      ["--seeds", "two"],
      ["--seeds", "0"],
    ]) {
      const r = soak(["--only", "R1", ...args]);
      assert.equal(r.code, 2, `${args.join(" ")}: ${r.stdout}${r.stderr}`);
      assert.match(r.stderr, /^soak: --seeds?/m);
      assert.equal(r.stdout, "", "nothing ran");
    }
  });
});
