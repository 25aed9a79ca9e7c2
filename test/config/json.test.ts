import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseJson } from "../../src/config/json.js";

function error(text: string): string {
  const r = parseJson(text);
  assert.equal(r.ok, false, `expected ${JSON.stringify(text)} to be invalid`);
  if (r.ok) return "";
  return `${r.error.line}:${r.error.column}: ${r.error.message}`;
}

describe("parseJson: the first syntax error, by line and column", () => {
  test("valid JSON parses as JSON.parse would, a BOM allowed", () => {
    const text = '{"a": [1, -2.5e3, true, null, "x\\u00e9\\n"], "b": {}}';
    assert.deepEqual(parseJson(text), { ok: true, value: JSON.parse(text) });
    assert.deepEqual(parseJson("\uFEFF[]"), { ok: true, value: [] });
  });

  test("each kind of error", () => {
    const cases: [string, string][] = [
      ['{"a": 1,}', "1:8: trailing comma in an object"],
      ["[1,\n 2,\n]", "2:3: trailing comma in an array"],
      ['{\n  "a": 1\n  "b": 2\n}', `3:3: unexpected character "\\""; expected ',' or '}' in an object`],
      ["{'a': 1}", "1:2: property names must be in double quotes"],
      ["{\"a\": 'x'}", "1:7: strings must be in double quotes"],
      ['{"a" 1}', "1:6: unexpected character \"1\"; expected ':' after the property name"],
      ['{"a": tru}', '1:7: unexpected character "t"; expected a value'],
      ["// note\n{}", "1:1: comments are not allowed in JSON"],
      ['{"a": 1 /* x */}', "1:9: comments are not allowed in JSON"],
      ["", "1:1: unexpected end of file; expected a value"],
      ['{"a": [1, 2', "1:12: unexpected end of file; expected ',' or ']' in an array"],
      ['{"a": "open', "1:7: unterminated string"],
      ['{"a": "line\nbreak"}', "1:12: unterminated string (write a line break as \\n)"],
      ['"\\x"', "1:2: invalid escape in a string"],
      ['"\\u12"', "1:2: invalid \\u escape"],
      ["-", "1:1: invalid number"],
      ['{"a": 1} {}', '1:10: unexpected character "{" after the end of the JSON value'],
    ];
    for (const [text, expected] of cases) assert.equal(error(text), expected, JSON.stringify(text));
  });

  test("a BOM does not count as a column", () => {
    assert.equal(error('\uFEFF{"a": 1,}'), "1:8: trailing comma in an object");
  });
});
