// Refreshes vendor/tree-sitter-bash/ from the registry: `npm pack tree-sitter-bash@VERSION`, then
// the grammar's WebAssembly and its LICENSE out of the tarball, and SOURCE.json recording the
// version, the license, the tarball's integrity and the file's sha256 (test/permissions/
// vendored-grammar.test.ts checks the file against it).
//
// Vendored rather than a dependency: the package is 20 MB installed (the grammar's C sources,
// native prebuilds for six platforms, Node bindings and an install script), and the shell reader
// (src/permissions/shell-parser.ts, with web-tree-sitter) loads one 1.3 MB file of it.
//
//   tsx scripts/vendor-tree-sitter-bash.ts [VERSION]     (default: the version SOURCE.json records)
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const PACKAGE = "tree-sitter-bash";
const FILE = "tree-sitter-bash.wasm";
const VENDOR = fileURLToPath(new URL("../vendor/tree-sitter-bash/", import.meta.url));
const SOURCE = join(VENDOR, "SOURCE.json");

export interface VendoredGrammar {
  readonly package: string;
  readonly version: string;
  readonly license: string;
  readonly integrity: string;
  readonly file: string;
  readonly sha256: string;
}

export const readVendoredGrammar = (): VendoredGrammar => JSON.parse(readFileSync(SOURCE, "utf8"));
export const vendoredGrammarPath = (): string => join(VENDOR, FILE);
export const sha256 = (path: string): string => createHash("sha256").update(readFileSync(path)).digest("hex");

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const version = process.argv[2] ?? readVendoredGrammar().version;
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-grammar-"));
  try {
    const [packed] = JSON.parse(
      execFileSync("npm", ["pack", "--json", "--pack-destination", dir, `${PACKAGE}@${version}`], {
        cwd: dir,
        encoding: "utf8",
      }),
    ) as { filename: string; integrity: string }[];
    if (packed === undefined) throw new Error(`npm pack ${PACKAGE}@${version} wrote no tarball`);
    execFileSync("tar", [
      "-xzf",
      join(dir, packed.filename),
      "-C",
      dir,
      `package/${FILE}`,
      "package/LICENSE",
      "package/package.json",
    ]);
    const manifest = JSON.parse(readFileSync(join(dir, "package", "package.json"), "utf8")) as { license: string };
    copyFileSync(join(dir, "package", FILE), join(VENDOR, FILE));
    copyFileSync(join(dir, "package", "LICENSE"), join(VENDOR, "LICENSE"));
    const record: VendoredGrammar = {
      package: PACKAGE,
      version,
      license: manifest.license,
      integrity: packed.integrity,
      file: FILE,
      sha256: sha256(join(VENDOR, FILE)),
    };
    writeFileSync(SOURCE, `${JSON.stringify(record, null, 2)}\n`);
    console.log(`vendor/tree-sitter-bash/: ${PACKAGE}@${version}, sha256 ${record.sha256}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
