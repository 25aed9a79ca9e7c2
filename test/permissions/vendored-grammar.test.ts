// The Bash grammar is vendored (vendor/tree-sitter-bash/, refreshed by
// scripts/vendor-tree-sitter-bash.ts): the file is the release SOURCE.json names, and the shell
// reader finds it through package.json's `imports`, as the published package does.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { readVendoredGrammar, sha256, vendoredGrammarPath } from "../../scripts/vendor-tree-sitter-bash.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

test("the vendored Bash grammar is byte for byte the file of the tree-sitter-bash release SOURCE.json records", () => {
  const source = readVendoredGrammar();
  assert.equal(source.package, "tree-sitter-bash");
  assert.match(source.version, /^\d+\.\d+\.\d+$/);
  assert.equal(source.license, "MIT");
  assert.match(readFileSync(join(ROOT, "vendor", "tree-sitter-bash", "LICENSE"), "utf8"), /MIT License/);
  assert.equal(sha256(vendoredGrammarPath()), source.sha256);
});

test("#tree-sitter-bash.wasm (package.json's imports, what shell-parser.ts loads) is the vendored file, and tree-sitter-bash is no dependency", () => {
  const resolved = createRequire(join(ROOT, "src", "permissions", "shell-parser.ts")).resolve("#tree-sitter-bash.wasm");
  assert.equal(resolved, vendoredGrammarPath());
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    files: string[];
  } & Record<string, Record<string, string> | undefined>;
  for (const field of ["dependencies", "devDependencies", "optionalDependencies"])
    assert.equal(pkg[field]?.["tree-sitter-bash"], undefined, `tree-sitter-bash in ${field}`);
  assert.ok(pkg.files.includes("vendor"), "the published files carry vendor/");
});
