import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { R4_PARTS, r4Corpus } from "../../harness/r4.js";
import { SEED } from "./ci.js";
import { r4Part } from "./r4-part.js";

describe("R4 — bad input (1 of 3)", () => {
  test("the corpus: at least 200 cases, every family in a part", () => {
    const corpus = r4Corpus(SEED);
    assert.ok(corpus.length >= 200, `${corpus.length} cases`);
    for (const c of corpus)
      assert.ok(
        R4_PARTS.some((p) => p.includes(c.family)),
        `family ${c.family} is in no part`,
      );
  });
  r4Part(0);
});
