import type { JSONSchema7, LanguageModelV3FunctionTool } from "@ai-sdk/provider";
import { z } from "zod";

export interface ToolDefinition {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: z.ZodType;
}

/**
 * Publishes tools to the model. The schema describes the *input* side (defaults optional), in
 * draft-07 as the AI SDK does, and objects are closed (`additionalProperties: false`) unless the
 * schema says otherwise: the runtime strips unknown keys anyway, and OpenAI strict mode needs it.
 */
export function toModelTools(tools: readonly ToolDefinition[]): LanguageModelV3FunctionTool[] {
  return tools.map((tool) => ({
    type: "function",
    name: tool.name,
    description: tool.description,
    inputSchema: closeObjects(z.toJSONSchema(tool.inputSchema, { target: "draft-7", io: "input" }) as JSONSchema7),
  }));
}

const SCHEMA_KEYS = new Set(["items", "additionalProperties", "not", "if", "then", "else", "contains"]);
const SCHEMA_LIST_KEYS = new Set(["anyOf", "allOf", "oneOf", "prefixItems", "items"]);
const SCHEMA_MAP_KEYS = new Set(["properties", "patternProperties", "definitions", "$defs"]);

/** Walks schema keywords only, so a `default` or `const` value that looks like a schema is left alone. */
function closeObjects(schema: JSONSchema7): JSONSchema7 {
  const visit = (node: unknown): unknown => {
    if (node === null || typeof node !== "object" || Array.isArray(node)) return node;
    const out: Record<string, unknown> = { ...node };
    for (const [key, value] of Object.entries(out)) {
      if (SCHEMA_LIST_KEYS.has(key) && Array.isArray(value)) out[key] = value.map(visit);
      else if (SCHEMA_KEYS.has(key)) out[key] = visit(value);
      else if (SCHEMA_MAP_KEYS.has(key) && value && typeof value === "object") {
        out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, visit(v)]));
      }
    }
    const isObject = out.type === "object" || (Array.isArray(out.type) && out.type.includes("object"));
    if (isObject && out.additionalProperties === undefined) out.additionalProperties = false;
    return out;
  };
  return visit(schema) as JSONSchema7;
}
