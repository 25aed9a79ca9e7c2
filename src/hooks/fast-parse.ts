import type { z } from "zod";

/**
 * A shortcut past zod for the results handlers return most (`{ block: false }`,
 * `{ appendContext: "…" }`): a zod parse costs more than the rest of a handler's dispatch.
 *
 * It is derived from the hook's own result schema and only ever answers "valid, and here is
 * what zod would have returned" or "don't know" — never "invalid" — so it cannot weaken
 * validation: anything it does not recognize goes to zod. It recognizes only a plain object
 * whose keys are all fields of the schema that are, exactly, `z.boolean()`, `z.string()`,
 * `z.number()` or `z.enum([...])` (optional or not, no checks, formats, coercion, defaults or
 * refinements), with every required field present. Any other definition is not shortcut.
 */
export type FastParse = (value: unknown) => Record<string, unknown> | undefined;

type Test = (value: unknown) => boolean;

interface Field {
  readonly test: Test;
  readonly optional: boolean;
}

interface Def {
  readonly type: string;
  readonly checks?: readonly unknown[];
  readonly innerType?: z.ZodType;
  readonly entries?: Readonly<Record<string, unknown>>;
  readonly shape?: Readonly<Record<string, z.ZodType>>;
}

const isBoolean: Test = (v) => typeof v === "boolean";
const isString: Test = (v) => typeof v === "string";
// zod's z.number() rejects NaN and ±Infinity.
const isNumber: Test = (v) => typeof v === "number" && Number.isFinite(v);

function defOf(schema: z.ZodType): Def {
  return (schema as unknown as { _zod: { def: Def } })._zod.def;
}

/** True when the definition has exactly these keys (and empty `checks`, if present). */
function only(def: Def, keys: readonly string[]): boolean {
  for (const key of Object.keys(def)) {
    if (key === "checks" && (def.checks?.length ?? 0) === 0) continue;
    if (!keys.includes(key)) return false;
  }
  return true;
}

function scalarTest(schema: z.ZodType): Test | undefined {
  const def = defOf(schema);
  switch (def.type) {
    case "boolean":
      return only(def, ["type"]) ? isBoolean : undefined;
    case "string":
      return only(def, ["type"]) ? isString : undefined;
    case "number":
      return only(def, ["type"]) ? isNumber : undefined;
    case "enum": {
      const values = Object.values(def.entries ?? {});
      if (!only(def, ["type", "entries"]) || !values.every((v) => typeof v === "string")) return undefined;
      const allowed = new Set(values);
      return (v) => typeof v === "string" && allowed.has(v);
    }
    default:
      return undefined;
  }
}

/** The shortcut for one object schema, or undefined when it has a required field it cannot check. */
export function compileFastParse(schema: z.ZodObject): FastParse | undefined {
  const def = defOf(schema);
  if (def.type !== "object" || !only(def, ["type", "shape", "catchall"])) return undefined;
  // A null-prototype table: a key such as "__proto__" or "toString" finds nothing.
  const fields: Record<string, Field> = Object.create(null);
  let required = 0;
  for (const [key, field] of Object.entries(def.shape ?? {})) {
    const fieldDef = defOf(field);
    const optional = fieldDef.type === "optional" && only(fieldDef, ["type", "innerType"]);
    const test = scalarTest(optional ? (fieldDef.innerType as z.ZodType) : field);
    if (test) fields[key] = { test, optional };
    else if (!optional) return undefined;
    if (!optional) required++;
  }
  return (value) => {
    if (value === null || typeof value !== "object" || Object.getPrototypeOf(value) !== Object.prototype)
      return undefined;
    const out: Record<string, unknown> = {};
    let present = 0;
    // for…in, like zod's check for unrecognized keys (an inherited enumerable key is unknown here).
    for (const key in value) {
      const field = fields[key];
      // Read once: what is checked is what is returned, whatever a getter does next time.
      const v = (value as Record<string, unknown>)[key];
      if (field === undefined) return undefined;
      if (field.optional) {
        // An optional field, present as undefined, is valid: zod keeps it as undefined.
        if (v !== undefined && !field.test(v)) return undefined;
      } else if (field.test(v)) present++;
      else return undefined;
      out[key] = v;
    }
    return present === required ? out : undefined;
  };
}
