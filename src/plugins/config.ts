import { z } from "zod";
import { IdentifierSchema } from "../core/identifiers.js";
import { HOOK_NAMES, type HookName } from "../hooks/catalog.js";

const hookName = z.enum(HOOK_NAMES as [HookName, ...HookName[]]);
const timeoutMs = z.number().int().positive().max(600_000);

/** `plugins[].hooks` in gatehouse.json: what the operator grants and overrides for one plugin. */
export const PluginHookOptionsSchema = z
  .object({
    allowConversationAccess: z.boolean().optional(),
    allowPromptInjection: z.boolean().optional(),
    timeoutMs: timeoutMs.optional(),
    timeouts: z.partialRecord(hookName, timeoutMs).optional(),
    failOpen: z.union([z.boolean(), z.array(hookName)]).optional(),
  })
  .strict();

/** One entry of gatehouse.json's `plugins` list. */
export const PluginEntrySchema = z
  .object({
    path: z.string().min(1).optional(),
    package: z.string().min(1).optional(),
    id: IdentifierSchema.optional(),
    enabled: z.boolean().optional(),
    config: z.unknown().optional(),
    hooks: PluginHookOptionsSchema.optional(),
  })
  .strict()
  .refine((e) => (e.path === undefined) !== (e.package === undefined), {
    message: "give exactly one of path or package",
  });

export type PluginHookOptions = z.infer<typeof PluginHookOptionsSchema>;
export type PluginEntry = z.infer<typeof PluginEntrySchema>;

/** The shape a loaded module must export (default export or the module itself). */
export const PluginModuleSchema = z.object({
  id: IdentifierSchema,
  name: z.string().optional(),
  version: z.string().optional(),
  setup: z.custom<(api: unknown) => unknown>((v) => typeof v === "function", { message: "expected a function" }),
});
