import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { locateJsonPath, parseJsonText } from "../../src/core/json.js";

function error(text: string): string {
  const r = parseJsonText(text);
  assert.equal(r.ok, false, `expected ${JSON.stringify(text)} to be invalid`);
  if (r.ok) return "";
  return `${r.error.line}:${r.error.column}: ${r.error.message}`;
}

describe("parseJsonText: a key twice in one object is an error at its second occurrence", () => {
  test("at the top level, nested, in an array element; the same key in different objects is fine", () => {
    assert.equal(
      error('{"tools":{"deny":["Bash"]},"tools":{"deny":[]}}'),
      '1:28: duplicate key "tools" (first at line 1, column 2); a key may appear only once',
    );
    assert.equal(
      error('{"tools": {\n  "deny": ["Bash"],\n  "deny": []\n}}'),
      '3:3: duplicate key "deny" in tools (first at line 2, column 3); a key may appear only once',
    );
    assert.equal(
      error('{"hooks": {"Stop": [{"hooks": []}, {"matcher": "", "hooks": [], "hooks": [1]}]}}'),
      '1:65: duplicate key "hooks" in hooks.Stop[1] (first at line 1, column 52); a key may appear only once',
    );
    assert.equal(parseJsonText('{"a": {"k": 1}, "b": {"k": 2}, "c": [{"k": 3}, {"k": 4}]}').ok, true);
    const r = parseJsonText('{"x": 1, "x": 2}');
    assert.ok(!r.ok && r.error.duplicateKey === "x");
  });
});

describe("parseJsonText: the first syntax error, by line and column", () => {
  test("valid JSON parses as JSON.parse would, a BOM allowed", () => {
    const text = '{"a": [1, -2.5e3, true, null, "x\\u00e9\\n"], "b": {}, "c": 2, "__proto__": 1}';
    assert.deepEqual(parseJsonText(text), { ok: true, value: JSON.parse(text) });
    assert.deepEqual(parseJsonText("\uFEFF[]"), { ok: true, value: [] });
    assert.deepEqual(parseJsonText(' \t\r\n"\\/"\r'), { ok: true, value: "/" });
  });

  test("each kind of error", () => {
    const cases: [string, string][] = [
      ['{"a": 1,}', "1:8: trailing comma in an object"],
      ["[1,\n 2,\n]", "2:3: trailing comma in an array"],
      ['{\n  "a": 1\n  "b": 2\n}', `3:3: unexpected character "\\""; expected ',' or '}' in an object`],
      ["[1 2]", `1:4: unexpected character "2"; expected ',' or ']' in an array`],
      ["{'a': 1}", "1:2: property names must be in double quotes"],
      ["{a: 1}", "1:2: property names must be in double quotes"],
      ['{"a": 1,,}', `1:9: unexpected character ","; expected a property name in double quotes`],
      ["{\"a\": 'x'}", "1:7: strings must be in double quotes"],
      ['{"a" 1}', `1:6: unexpected character "1"; expected ':' after the property name`],
      ['{"a": tru}', `1:7: unexpected character "t"; expected a value`],
      ["[1,,2]", `1:4: unexpected character ","; expected a value`],
      ["\u00a0{}", "1:1: unexpected character U+00A0; expected a value"],
      ["// note\n{}", "1:1: comments are not allowed in JSON"],
      ['{"a": 1 /* x */}', "1:9: comments are not allowed in JSON"],
      ["", "1:1: unexpected end of file; expected a value"],
      ['{"a": [1, 2', "1:12: unexpected end of file; expected ',' or ']' in an array"],
      ['{"a": {', "1:8: unexpected end of file; expected ',' or '}' in an object"],
      ['{"a"', "1:5: unexpected end of file; expected ':' after the property name"],
      ['{"a": "open', "1:7: unterminated string"],
      ['{"a": "line\nbreak"}', "1:12: unterminated string (write a line break as \\n)"],
      ['{"a": "tab\there"}', "1:11: control character U+0009 in a string; escape it"],
      ['"\\x"', "1:2: invalid escape in a string"],
      ['"\\\\ \\q"', "1:5: invalid escape in a string"],
      ['"\\u12"', "1:2: invalid \\u escape"],
      ["-", "1:1: invalid number"],
      ["[1.]", "1:2: invalid number"],
      ['{"a": 1} {}', `1:10: unexpected character "{" after the end of the JSON value`],
      ["01", `1:2: unexpected character "1" after the end of the JSON value`],
      // A bad string where a comma belongs: the missing comma comes first, as for JSON.parse.
      ['[null "\\q"]', `1:7: unexpected character "\\""; expected ',' or ']' in an array`],
    ];
    for (const [text, expected] of cases) assert.equal(error(text), expected, JSON.stringify(text));
  });

  test("a BOM does not count as a column; \\r\\n and a lone \\r each end a line", () => {
    assert.equal(error('\uFEFF{"a": 1,}'), "1:8: trailing comma in an object");
    assert.equal(error('{\r\n"a": 1,\r\n}'), "2:7: trailing comma in an object");
    assert.equal(error('{\r"a": 1,\r}'), "2:7: trailing comma in an object");
  });

  test("messages never show more than one character of the input", () => {
    const secret = "sk-live-0123456789";
    for (const text of [`{"key": ${secret}}`, `{"key": "${secret}\\x"}`, `{"key": '${secret}'}`, `{${secret}: 1}`]) {
      assert.doesNotMatch(error(text), /sk-|live|0123/, text);
    }
  });

  test("too deeply nested for jsonc-parser to locate: not valid JSON at 1:1", () => {
    // jsonc-parser recurses per level and overflows the stack; JSON.parse does not.
    const depth = 200_000;
    assert.equal(error("[".repeat(depth)), "1:1: not valid JSON");
    assert.equal(parseJsonText(`${"[".repeat(depth)}${"]".repeat(depth)}`).ok, true);
  });
});

describe("locateJsonPath", () => {
  const text = [
    "{",
    '  "maxSteps": 0,',
    '  "plugins": [',
    '    { "path": "a.ts", "hooks": { "timeouts": { "x": 1 } } },',
    '    { "id": "b" }',
    "  ],",
    '  "maxSteps": 3',
    "}",
  ].join("\n");

  test("a property is found at its name, an element where it starts", () => {
    assert.deepEqual(locateJsonPath(text, ["plugins", 0, "hooks", "timeouts", "x"]), { line: 4, column: 48 });
    assert.deepEqual(locateJsonPath(text, ["plugins", 1]), { line: 5, column: 5 });
    assert.deepEqual(locateJsonPath(text, []), { line: 1, column: 1 });
  });

  test("of duplicate names the last, which is the one JSON.parse keeps", () => {
    assert.deepEqual(locateJsonPath(text, ["maxSteps"]), { line: 7, column: 3 });
  });

  test("a missing property: the nearest enclosing value", () => {
    assert.deepEqual(locateJsonPath(text, ["plugins", 1, "path"]), { line: 5, column: 5 });
    assert.deepEqual(locateJsonPath(text, ["nope", "deeper"]), { line: 1, column: 1 });
  });

  test("a BOM is not a column; invalid JSON has no locations", () => {
    assert.deepEqual(locateJsonPath('\uFEFF{"a": 1}', ["a"]), { line: 1, column: 2 });
    assert.equal(locateJsonPath('{"a": 1,}', ["a"]), undefined);
  });
});
