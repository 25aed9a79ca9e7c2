import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { describe, test } from "node:test";
import { CONFIG_SCHEMA_FILE, configJsonSchema, renderConfigJsonSchema } from "../../src/config/index.js";

describe("schema/gatehouse.schema.json", () => {
  test("is up to date with the zod schema (regenerate: tsx scripts/gen-config-schema.ts)", async () => {
    const checkedIn = await readFile(new URL(`../../${CONFIG_SCHEMA_FILE}`, import.meta.url), "utf8");
    assert.equal(checkedIn, renderConfigJsonSchema(), `${CONFIG_SCHEMA_FILE} is stale`);
  });

  test("describes every top-level key, refuses unknown ones, and has no required keys", () => {
    const schema = configJsonSchema() as {
      properties: Record<string, { description?: string }>;
      additionalProperties: unknown;
      required?: unknown;
    };
    assert.equal(schema.additionalProperties, false);
    assert.equal(schema.required, undefined);
    for (const [key, property] of Object.entries(schema.properties)) {
      assert.ok(property.description, `${key} has a description for editors`);
    }
  });
});
