import { existsSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, extname, join, resolve } from "node:path";

/**
 * What makes a module an OpenClaw plugin, and what OpenClaw reads beside it: the entry
 * (`register(api)`, a `definePluginEntry(...)` object, or a bare function), the package's
 * `openclaw.extensions`, and the `openclaw.plugin.json` manifest.
 */

type Obj = Record<string, unknown>;
const isRecord = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

export interface OpenClawEntry {
  /** The exported definition (`{ id, name, register, … }`), when the module exported one. */
  readonly definition?: Obj;
  readonly register: (api: unknown) => unknown;
}

/**
 * OpenClaw's own resolution: unwrap nested defaults (mixed ESM/CJS bundles); a function is the
 * `register`; an object with a `register` function is the definition; `default` and `module`
 * keys are searched too.
 */
export function resolveOpenClawExport(
  mod: unknown,
  options: { bareFunction?: boolean } = {},
): OpenClawEntry | undefined {
  const seen = new Set<unknown>();
  const candidates: unknown[] = [unwrapDefault(mod), mod];
  for (let i = 0; i < candidates.length && i < 12; i++) {
    const value = candidates[i];
    if (seen.has(value)) continue;
    seen.add(value);
    // A bare function is OpenClaw's `register` only when something says the module is OpenClaw's:
    // taken for a Gatehouse `setup`, it would see OpenClaw's tool names (`exec`, not `Bash`).
    if (typeof value === "function" && (options.bareFunction || value.name === "register"))
      return { register: value as OpenClawEntry["register"], ...named(mod) };
    if (isRecord(value)) {
      if (typeof value.register === "function")
        return { definition: value, register: value.register as OpenClawEntry["register"] };
      for (const key of ["default", "module"]) if (key in value) candidates.push(value[key]);
    }
  }
  return undefined;
}

/** `export default function register(api)` beside `export const id = …`: the module's own id and name. */
function named(mod: unknown): { definition?: Obj } {
  if (!isRecord(mod) || (typeof mod.id !== "string" && typeof mod.name !== "string")) return {};
  return { definition: { id: mod.id, name: mod.name, description: mod.description, version: mod.version } };
}

function unwrapDefault(mod: unknown): unknown {
  let value = mod;
  const seen = new Set<unknown>();
  while (isRecord(value) && "default" in value && !seen.has(value)) {
    seen.add(value);
    value = value.default;
  }
  return value;
}

/**
 * A module looks like an OpenClaw plugin (and not like a Gatehouse one). A bare function counts
 * when it is named `register` or when `bareFunction` says an OpenClaw manifest or package field
 * was found beside it.
 */
export function isOpenClawModule(mod: unknown, options: { bareFunction?: boolean } = {}): boolean {
  const value = unwrapDefault(mod);
  if (isRecord(value) && typeof value.setup === "function") return false;
  return resolveOpenClawExport(mod, options) !== undefined;
}

/**
 * `openclaw.plugin.json`, or a package.json with an `openclaw` field, beside the entry or above
 * it, or at the package root when the loader found one (an entry in `dist/` beside a
 * `{"type":"module"}` package.json stops the walk before the real root).
 */
export function hasOpenClawMarkers(entryFile: string, packageRoot?: string): boolean {
  if (packageRoot !== undefined && markedRoot(packageRoot)) return true;
  let dir = dirname(entryFile);
  for (let depth = 0; depth < 8; depth++) {
    if (existsSync(join(dir, "openclaw.plugin.json"))) return true;
    const pkg = join(dir, "package.json");
    if (existsSync(pkg)) {
      try {
        const raw = JSON.parse(readFileSync(pkg, "utf8")) as unknown;
        return isRecord(raw) && raw.openclaw !== undefined;
      } catch {
        return false;
      }
    }
    if (dirname(dir) === dir) return false;
    dir = dirname(dir);
  }
  return false;
}

function markedRoot(root: string): boolean {
  if (existsSync(join(root, "openclaw.plugin.json"))) return true;
  try {
    const raw = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as unknown;
    return isRecord(raw) && raw.openclaw !== undefined;
  } catch {
    return false;
  }
}

export interface OpenClawManifest {
  readonly file: string;
  readonly id?: string;
  readonly name?: string;
  readonly description?: string;
  readonly version?: string;
  readonly configSchema?: Obj;
}

/**
 * `openclaw.plugin.json` at the package root when the loader found one (whatever the package's
 * `exports` map lets through), else beside the entry or in a folder above it, up to the first
 * folder with a package.json. Read without running any code, as OpenClaw does.
 */
export function findManifest(entryFile: string, packageRoot?: string): OpenClawManifest | undefined {
  if (packageRoot !== undefined && existsSync(join(packageRoot, "openclaw.plugin.json")))
    return readManifest(join(packageRoot, "openclaw.plugin.json"));
  let dir = dirname(entryFile);
  for (let depth = 0; depth < 8; depth++) {
    const file = join(dir, "openclaw.plugin.json");
    if (existsSync(file)) return readManifest(file);
    if (existsSync(join(dir, "package.json")) || dirname(dir) === dir) return undefined;
    dir = dirname(dir);
  }
  return undefined;
}

function readManifest(file: string): OpenClawManifest {
  const raw = JSON.parse(readFileSync(file, "utf8")) as unknown;
  if (!isRecord(raw)) throw new Error(`${file}: expected a JSON object`);
  const text = (k: string) => (typeof raw[k] === "string" ? { [k]: raw[k] as string } : {});
  return {
    file,
    ...text("id"),
    ...text("name"),
    ...text("description"),
    ...text("version"),
    ...(isRecord(raw.configSchema) ? { configSchema: raw.configSchema } : {}),
  };
}

/**
 * The entry file of a plugin folder or package root: `package.json`'s `openclaw.extensions`
 * (OpenClaw's field; the first entry), else its `main`, else `index.ts` / `index.js`.
 * Returns undefined when `path` is not a folder.
 */
export function folderEntry(path: string): { file: string; extra: string[] } | undefined {
  if (!existsSync(path) || !statSync(path).isDirectory()) return undefined;
  const pkgFile = join(path, "package.json");
  const pkg = existsSync(pkgFile) ? (JSON.parse(readFileSync(pkgFile, "utf8")) as unknown) : undefined;
  const openclaw = isRecord(pkg) && isRecord(pkg.openclaw) ? pkg.openclaw : undefined;
  const extensions = Array.isArray(openclaw?.extensions)
    ? openclaw.extensions.filter((e): e is string => typeof e === "string")
    : [];
  if (extensions.length > 0) return { file: resolve(path, extensions[0] as string), extra: extensions.slice(1) };
  if (isRecord(pkg) && typeof pkg.main === "string") return { file: resolve(path, pkg.main), extra: [] };
  for (const name of ["index.ts", "index.mts", "index.js", "index.mjs"])
    if (existsSync(join(path, name))) return { file: join(path, name), extra: [] };
  return undefined;
}

/** An id for a plugin that names none: the file's name, or its folder's for an `index` file. */
export function fallbackId(entryFile: string): string {
  const base = basename(entryFile, extname(entryFile));
  return base === "index" ? basename(dirname(entryFile)) : base;
}
