// docs/hosts/*.md are generated from the mapping data (scripts/hosts-doc.ts): a page that differs
// from what the data says is out of date.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { AGENTS, HOST_PAGES, renderHostPage } from "../../scripts/hosts-doc.js";

for (const agent of AGENTS)
  test(`docs/hosts/${HOST_PAGES[agent]} is what the mapping data says (npm run docs)`, () => {
    const page = readFileSync(new URL(`../../docs/hosts/${HOST_PAGES[agent]}`, import.meta.url), "utf8");
    assert.equal(page, renderHostPage(agent));
  });
