/**
 * Renders docs/hooks.md, the hooks reference, from the hook catalog. Everything hook-specific
 * (when it fires, kind, failure policy, timeout, access, matcher, event and result fields,
 * merge rules) is read from `HOOKS` and `GateVerdictSchema`; only the general explanations are
 * written here. `npm run docs` writes the file; test/hooks/docs.test.ts keeps it in step.
 */
import { z } from "zod";
import { type FieldRule, GateVerdictSchema, HOOKS, type HookName, type HookSpec } from "../src/hooks/catalog.js";

/** The parts of a zod 4 schema definition this renderer reads. */
interface Def {
  readonly type: string;
  readonly innerType?: z.ZodType;
  readonly element?: z.ZodType;
  readonly entries?: Readonly<Record<string, string | number>>;
  readonly values?: readonly unknown[];
  readonly shape?: Readonly<Record<string, z.ZodType>>;
  readonly options?: readonly z.ZodType[];
}

const defOf = (schema: z.ZodType): Def => schema.def as unknown as Def;

/** A `.meta({ type })` label, wherever the schema carries one. */
function metaType(schema: z.ZodType): string | undefined {
  const type = z.globalRegistry.get(schema)?.type;
  return typeof type === "string" ? type : undefined;
}

interface Field {
  readonly name: string;
  readonly optional: boolean;
  readonly type: string;
  readonly description: string;
}

/** Unwraps `optional`; the description may sit on the wrapper or on the inner schema. */
function fieldOf(name: string, schema: z.ZodType): Field {
  let inner = schema;
  let optional = false;
  let description = schema.description;
  while (defOf(inner).type === "optional") {
    optional = true;
    inner = defOf(inner).innerType as z.ZodType;
    description ??= inner.description;
  }
  return { name, optional, type: typeLabel(inner), description: description ?? "" };
}

function fieldsOf(object: z.ZodType): Field[] {
  return Object.entries(defOf(object).shape ?? {}).map(([name, schema]) => fieldOf(name, schema));
}

/** A TypeScript-like label for a schema: `string`, `T[]`, `"a" | "b"`, `{ a: string; b?: number }`. */
export function typeLabel(schema: z.ZodType): string {
  const named = metaType(schema);
  if (named) return named;
  const def = defOf(schema);
  switch (def.type) {
    case "optional":
      return typeLabel(def.innerType as z.ZodType);
    case "nullable":
      return `${typeLabel(def.innerType as z.ZodType)} | null`;
    case "array": {
      const element = typeLabel(def.element as z.ZodType);
      return / \| /.test(element) && !element.startsWith("{") ? `(${element})[]` : `${element}[]`;
    }
    case "enum":
      return Object.values(def.entries ?? {})
        .map((v) => JSON.stringify(v))
        .join(" | ");
    case "literal":
      return (def.values ?? []).map((v) => JSON.stringify(v)).join(" | ");
    case "union":
      return (def.options ?? []).map(typeLabel).join(" | ");
    case "object": {
      const fields = fieldsOf(schema).map((f) => `${f.name}${f.optional ? "?" : ""}: ${f.type}`);
      return fields.length ? `{ ${fields.join("; ")} }` : "{}";
    }
    case "custom":
      return "unknown";
    default:
      return def.type;
  }
}

/** Object types the catalog names with `.meta({ type })` (e.g. `Usage`), found anywhere in its schemas. */
function namedObjects(): Map<string, z.ZodType> {
  const found = new Map<string, z.ZodType>();
  const visit = (schema: z.ZodType | undefined): void => {
    if (schema === undefined) return;
    const def = defOf(schema);
    const name = metaType(schema);
    if (name && def.type === "object" && !found.has(name)) found.set(name, schema);
    visit(def.innerType);
    visit(def.element);
    for (const option of def.options ?? []) visit(option);
    for (const field of Object.values(def.shape ?? {})) visit(field);
  };
  for (const s of Object.values(HOOKS) as HookSpec[]) {
    visit(s.event);
    visit(s.result);
  }
  return found;
}

// ─── Labels ─────────────────────────────────────────────────────────────────────────────────

const KIND_SUMMARY: Record<HookSpec["kind"], string> = {
  observe: "handlers run concurrently; what they return is ignored",
  modify: "handlers run one after another; their results are merged field by field",
  claim: "handlers run one after another; the first to return `handled: true` wins",
  gate: "handlers run one after another; each answers pass or block, and the first block stops",
  sync: "handlers run synchronously, one after another, on the persistence path",
};

export function timeoutLabel(ms: number): string {
  if (ms === 0) return "none (synchronous)";
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

function accessLabel(spec: HookSpec): string {
  if (spec.access.promptInjection) return "★ conversation, prompt injection";
  if (spec.access.conversation) return "★ conversation";
  return "any plugin";
}

function ruleLabel(rule: FieldRule | undefined): string {
  if (rule === undefined) return "—";
  if (rule.rule === "rank") return `rank: ${rule.order.map((v) => `\`${JSON.stringify(v)}\``).join(" > ")}`;
  return rule.rule;
}

function failureDetail(spec: HookSpec): string {
  if (spec.failure === "closed") {
    if (spec.kind === "gate")
      return "**closed**: a handler that throws, times out or returns anything but a valid pass/block decision blocks, attributed to its plugin.";
    if (spec.blockField)
      return `**closed**: a handler that throws, times out or returns an invalid result sets \`${spec.blockField}\`, attributed to its plugin, and the remaining handlers are not called.`;
    return "**closed**.";
  }
  switch (spec.kind) {
    case "observe":
      return "**open**: a handler that throws or times out is logged; the run goes on.";
    case "claim":
      return "**open**: a handler that throws, times out or returns an invalid result is logged and counts as declining.";
    case "sync":
      return "**open**: a handler that throws, returns an invalid result or returns a Promise is logged and skipped.";
    default:
      return "**open**: a handler that throws, times out or returns an invalid result is logged and its result discarded; the other handlers' results stand.";
  }
}

/** Text in a table cell: pipes escaped (also inside code spans), no line breaks. */
function cell(text: string): string {
  return text.replace(/\|/g, "\\|").replace(/\n/g, " ");
}

function code(text: string): string {
  return `\`${text}\``;
}

// ─── Sections ──────────────────────────────────────────────────────────────────────────────

const HOOK_NAMES = Object.keys(HOOKS) as HookName[];
const spec = (hook: HookName): HookSpec => HOOKS[hook];

/** `a`, `b` and `c`: hook names from the catalog, for the general sections. */
function hookList(filter: (s: HookSpec) => boolean): string {
  const names = HOOK_NAMES.filter((h) => filter(spec(h))).map(code);
  return names.length < 2 ? names.join("") : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
}

function orList(values: readonly string[]): string {
  const quoted = [...new Set(values)].map(code);
  return quoted.length < 2 ? quoted.join("") : `${quoted.slice(0, -1).join(", ")} or ${quoted.at(-1)}`;
}

function intro(): string {
  return `# Hooks reference

<!-- Generated from src/hooks/catalog.ts by \`npm run docs\` (scripts/gen-docs.ts). Do not edit by hand. -->

Gatehouse fires a hook at every step of a run: the user's prompt, the model call, each tool
call and tool result, the final answer, its delivery, the end of the run. The order in which a
run fires them, and which gate sees which input and which reply, is in
[the run lifecycle](lifecycle.md). A plugin registers handlers in its \`setup\`:

\`\`\`ts
import { definePlugin } from "gatehouse-runtime";

export default definePlugin({
  id: "no-secrets",
  setup(api) {
    api.on("message_sending", (event) => ({ content: event.content.replaceAll(/sk-\\w+/g, "[key]") }), {
      priority: 10, // higher runs first; for ties see "Order" below
      timeoutMs: 2_000, // this handler's own timeout (operators can override it)
    });
  },
});
\`\`\`

A handler receives \`(event, ctx)\` and returns a result, a promise of one, or nothing.
Returning nothing (\`undefined\`) means "no opinion" on every kind of hook. \`api.on\` is typed
from the catalog, so the event, \`ctx\` and the allowed result are checked at compile time.
Other options: \`matcher\` (tool hooks only, see below) and \`id\` (registering the same \`id\`
again replaces the handler instead of adding a second one). Any other key is an
[invalid registration](#invalid-registrations).

## Kinds

Every hook has one of five kinds, which decide how its handlers run and what their results do:

- **observe**: handlers run concurrently; what they return is ignored. Most are awaited by the
  run; the *detached* ones (model call events) are not: they go to a bounded background
  queue, and an event is dropped with a warning when that queue is full.
- **modify**: handlers run one after another, in order; each result is checked and merged into
  the hook's outcome field by field, each field by its own rule (below).
- **claim**: handlers run one after another; the first that returns \`handled: true\` wins and
  the remaining handlers are not called.
- **gate**: handlers run one after another and answer exactly \`{ outcome: "pass" }\` or
  \`{ outcome: "block", reason, message?, category? }\`; the first block stops the others.
  \`reason\` is internal: it is never shown, logged or stored. Only \`message\` reaches the user.
- **sync**: handlers run synchronously on the persistence path (before a message is written).
  They must answer synchronously: a returned Promise is an error and its result is ignored.

## Order

Handlers run by priority, higher first. Among equal priorities:

1. plugins run in the order they first registered (for plugins in \`gatehouse.json\`, the order
   of the \`plugins\` list), and a plugin keeps that place when it is reloaded: a reload swaps
   its handlers in where the old ones were, not at the end. Only a plugin taken off the engine
   (\`HookEngine.removePlugin\`) and added again counts as new and goes after the others;
2. one plugin's handlers run in the order it registered them; registering the same \`id\` again
   replaces the handler in its place.

This is not global registration order: a handler that plugin A adds (\`HookEngine.on\`) after
plugin B's still runs before B's, and two plugins keep their relative order however often
either is reloaded.

## Merge rules

Each result field of a modify or sync hook has exactly one rule:

- **chain**: each handler sees the value as rewritten by the handlers before it (two redaction
  plugins compose); the last rewrite wins. Events of hooks with a chain field also carry
  \`original\`: the event as Gatehouse built it, before any handler's rewrite.
- **first**: the value of the first handler (by priority) that sets the field wins.
- **concat**: strings are joined with a blank line, in handler order.
- **intersect**: lists are intersected (a tool allow-list can only shrink).
- **latch**: once a handler sets it to \`true\` it stays true, and the remaining handlers are not
  called.
- **collect**: every value set, in handler order, as a list.
- **rank**: the strongest value wins, by the order listed for the field (strongest first).

## Events and results

Events are frozen snapshots: a handler cannot change what the next one sees except through a
chain field of its result. Histories (\`Message[]\`) are shared, never copied, so a long
conversation costs nothing extra per hook. Event fields may be added in later versions; none is
renamed. Named types (\`Message\`, …) are described [at the end](#types).

A result is data. It is read once, when the handler answers, into plain objects and arrays
(own enumerable keys, each read exactly once: a getter runs once, and what it returned is what
is checked and used); a getter or Proxy that throws while it is read, a function, a symbol or a
cycle makes it invalid — never a failure of the run, and what was thrown is never shown or
logged. The copy is then checked against the hook's strict schema: an unknown key, a wrong type
or a malformed value makes the whole result invalid. What an invalid result, a throw or a
timeout does is the hook's failure policy.

## Reasons and messages

Every hook that can block takes one verdict, the gates' own:

\`\`\`ts
{ outcome: "block", reason?: string, message?: string }   // and { outcome: "pass" }: no opinion
\`\`\`

- \`reason\` is internal: never shown, logged, stored or passed to a later hook (a gate requires
  one);
- \`message\` is what the reader of the block is told: the user for a gate and for
  \`before_response_emit\` (without one, Gatehouse's own notice naming the plugin), the *model* for
  the tool hooks (\`before_tool_call\`, \`after_tool_call\`), which reads it in the notice that takes
  the call's or the output's place — so whatever the model repeats: write it as you would write an
  error message for the user. \`message_sending\` takes no message (what it cancels is not
  replaced). A notice is delivered like any reply: it passes \`message_sending\` (and, unless
  \`before_response_emit\` produced it, that gate too).

The hooks' older spellings stay accepted as aliases: \`block\` for \`outcome: "block"\` (\`cancel\`
on \`message_sending\`), the tool hooks' \`blockReason\` for \`message\`, and
\`before_response_emit\`'s \`blockReason\` and \`message_sending\`'s \`cancelReason\` for
\`reason\`; a gate takes \`{ block, blockReason, message? }\` with \`blockReason\` as its
\`reason\`. A result that spells one thing both ways must say the same in both, or it is
invalid.

## Failure policy

- **open**: the failing handler is logged and ignored; the run goes on as if it had no opinion.
  Every hook not listed below.
- **closed**: the failure blocks, attributed to the handler's plugin: ${hookList((s) => s.failure === "closed")}.
  For a modify hook the failure sets the hook's block field (${orList(
    HOOK_NAMES.map((h) => spec(h).blockField).filter((f): f is string => f !== undefined),
  )}) and the remaining handlers are not called.

An operator can relax this per plugin with \`failOpen\` in the plugin's \`gatehouse.json\` entry
(\`true\`, or a list of hooks): that plugin's failures then count as "no opinion". Log lines about
failures carry the plugin, the hook and the kind of failure, never event content or reasons.

## Timeouts

Timeouts are per handler. The first of these that is set applies:

1. the operator's \`hooks.timeouts[hook]\`, then \`hooks.timeoutMs\` (a plugin's own entry,
   \`plugins[].hooks\`, before the global \`hooks\` block);
2. the registration's \`timeoutMs\`;
3. the hook's default (below).

Values are whole milliseconds from 1 to 600,000. When a handler times out its \`ctx.signal\`
aborts (so it can stop its work), a late answer is ignored, and the failure policy applies.
Sync hooks have no timeout.

## Access (★)

Hooks marked ★ see or steer the conversation: ${hookList((s) => s.access.conversation)}.
Bundled plugins and plugins passed in code may register them; a plugin loaded from a path or
package named in configuration needs \`allowConversationAccess: true\` in its \`gatehouse.json\`
entry (\`plugins[].hooks\`). The hooks that inject text into the prompt
(${hookList((s) => s.access.promptInjection)}) can also be refused to any plugin with
\`allowPromptInjection: false\`. A refusal is the operator's choice, so the run goes on: the
refused registration is reported loudly (a startup warning, and a \`refused\` line in
\`gatehouse plugins inspect\`) and the plugin's other hooks still work.

## Invalid registrations

A registration that cannot run as written is an error, not a refusal: an unknown hook name, a
\`matcher\` on a hook that takes none or a matcher that does not compile, an unknown option
(\`timeoutMS\`, \`prioirty\`), options that are not an object or hold a bad value, a handler that is
not a function. \`gatehouse run\` and \`gatehouse chat\` then refuse to start (exit 2), naming the
plugin, its file and the hook: a typo'd guard that was silently missing would leave a policy
unenforced. \`gatehouse plugins inspect\` lists the errors too. A program embedding Gatehouse
finds them in \`gatehouse.plugins.diagnostics\` (\`level: "error"\`); there the plugin's valid
registrations are in place, and whether to run anyway is the program's decision.

## Tool matchers

Tool hooks (${hookList((s) => s.matcher !== undefined)}) accept a \`matcher\` option, tested
against the event's \`toolName\` with Claude Code's
rules: \`"*"\`, \`""\` or no matcher match every tool; a string of only letters, digits, \`_\`,
\`-\`, \`,\`, \`|\` and spaces is an exact list of names (\`"Read|Write"\`); anything else is an
unanchored, case-sensitive regular expression (\`"^mcp__github__"\`). An array is a list of exact
names. A handler whose matcher does not match is not called.

## \`ctx\`

Every handler gets a \`ctx\` built from the run it fires in, so nothing relies on names to tell a
sub-agent from the main agent:

| Field | Type | Meaning |
|---|---|---|
| \`sessionId\` | \`string\` | the session of the run (a sub-agent has its own) |
| \`sessionKey\` | \`string\` | the key the caller named the session by (its id when it has none) |
| \`runId\` | \`string\` | this run: one user turn |
| \`parentRunId\` | \`string \\| undefined\` | in a sub-agent's run, the run that started it |
| \`parentSessionId\` | \`string \\| undefined\` | in a sub-agent's run, the parent's session |
| \`agentId\` | \`string\` | the agent running |
| \`depth\` | \`number\` | 0 for a top-level run, parent depth + 1 for a sub-agent |
| \`trigger\` | \`"user" \\| "api" \\| "cron" \\| "subagent"\` | what started the run |
| \`channel\` | \`"cli" \\| "http" \\| "api"\` | where the run came from |
| \`jobId\` | \`string \\| undefined\` | the scheduled job, for cron runs |
| \`traceparent\` | \`string\` | W3C trace context; a sub-agent keeps the trace id |
| \`hook\` | \`string\` | the hook being fired |
| \`pluginId\` | \`string\` | the plugin this handler belongs to |
| \`signal\` | \`AbortSignal\` | aborts when this handler times out or the run is cancelled |

Outside any run (e.g. \`gatehouse hooks test\`) the identity fields are empty strings, \`depth\` is 0
and \`trigger\` and \`channel\` are \`"api"\`.
`;
}

function summary(): string {
  const rows = HOOK_NAMES.map((hook) => {
    const s = spec(hook);
    const kind = s.kind === "observe" && s.detached ? "observe (detached)" : s.kind;
    const name = `[${code(hook)}](#${hook})${s.deprecated ? " (deprecated)" : ""}`;
    return `| ${name} | ${kind} | ${s.failure} | ${timeoutLabel(s.timeoutMs)} | ${accessLabel(s)} | ${s.matcher ? code(s.matcher) : "—"} |`;
  });
  return `## All hooks

| Hook | Kind | Failure policy | Default timeout | Access | Matcher |
|---|---|---|---|---|---|
${rows.join("\n")}
`;
}

interface Column {
  readonly title: string;
  readonly value: (f: Field) => string;
}

/**
 * A field table: the name (with `?` when optional), the type, any extra columns, and the
 * description column only when some field has one.
 */
function fieldTable(fields: readonly Field[], extra: readonly Column[] = []): string {
  const columns: Column[] = [
    { title: "Field", value: (f) => code(`${f.name}${f.optional ? "?" : ""}`) },
    { title: "Type", value: (f) => code(f.type) },
    ...extra,
    ...(fields.some((f) => f.description) ? [{ title: "Description", value: (f: Field) => f.description }] : []),
  ];
  const row = (values: readonly string[]) => `| ${values.join(" | ")} |`;
  return [
    row(columns.map((c) => c.title)),
    row(columns.map(() => "---")),
    ...fields.map((f) => row(columns.map((c) => cell(c.value(f))))),
  ].join("\n");
}

function resultSection(s: HookSpec): string {
  if (s.kind === "observe") return "**Result:** none; what a handler returns is ignored.";
  if (s.kind === "gate") {
    const [pass, block] = (defOf(GateVerdictSchema).options ?? []) as z.ZodType[];
    const blockFields = fieldsOf(block as z.ZodType).filter((f) => f.name !== "outcome");
    return `**Result:** a strict decision, exactly one of:

- \`${typeLabel(pass as z.ZodType)}\`
- \`${typeLabel(block as z.ZodType)}\`

${fieldTable(blockFields)}

Accepted as an alias, in the other hooks' spelling: \`{ block: boolean; blockReason?: string; message?: string; category?: string }\` (\`blockReason\` is the internal reason; \`block: false\` passes). Nothing else is accepted: an extra key or a missing \`reason\` is invalid and blocks.`;
  }
  const fields = fieldsOf(s.result as z.ZodType);
  if (s.kind === "claim")
    return `**Result:** the first handler to return \`handled: true\` wins; its whole result is used and the remaining handlers are not called.

${fieldTable(fields)}`;
  const rules = s.rules ?? {};
  const notes: string[] = [];
  if (Object.values(rules).some((r) => r.rule === "chain"))
    notes.push("Handlers after a rewrite see it in their event; `event.original` is the event before any rewrite.");
  if (s.normalize) notes.push("Results also pass this hook's own cross-field checks; one that fails them is invalid.");
  return `**Result**, merged field by field:

${fieldTable(fields, [{ title: "Rule", value: (f) => ruleLabel(rules[f.name]) }])}${notes.length ? `\n\n${notes.join(" ")}` : ""}`;
}

function hookSection(hook: HookName): string {
  const s = spec(hook);
  const facts = [
    `- **Kind:** ${s.kind}: ${KIND_SUMMARY[s.kind]}.`,
    ...(s.kind === "observe"
      ? [
          s.detached
            ? "- **Detached:** the run does not wait for the handlers; events queue in a bounded background queue."
            : "- **Awaited:** the run waits for the handlers to finish.",
        ]
      : []),
    `- **Failure policy:** ${failureDetail(s)}`,
    `- **Default timeout:** ${timeoutLabel(s.timeoutMs)}.`,
    `- **Access:** ${accessLabel(s)}.`,
    ...(s.matcher ? [`- **Matcher:** tested against \`event.${s.matcher}\`.`] : []),
  ];
  const deprecated = s.deprecated ? `> **Deprecated:** ${s.deprecated}.\n\n` : "";
  return `### \`${hook}\`

${deprecated}Fires ${s.fires}.

${facts.join("\n")}

**Event:**

${fieldTable(fieldsOf(s.event))}

${resultSection(s)}
`;
}

function types(): string {
  const objects = [...namedObjects()].map(([name, schema]) => `### \`${name}\`\n\n${fieldTable(fieldsOf(schema))}\n`);
  return `## Types

### \`Message\`

A message as the session store holds it: \`id\`, \`sessionId\`, \`runId\` (the run that wrote it),
\`seq\` (its position in the session), \`role\` (\`user\`, \`assistant\`, \`tool\`, \`system\` or
\`summary\`), ordered \`parts\` (text, reasoning, tool calls, tool results, images, files),
\`metadata\` and \`createdAt\`. Messages reach hooks frozen. The type is exported as \`Message\`.

${objects.join("\n")}`;
}

/** The whole reference, as written to docs/hooks.md. */
export function renderHooksDoc(): string {
  return `${[intro(), summary(), "## Hooks\n", ...HOOK_NAMES.map(hookSection), types()].join("\n").trimEnd()}\n`;
}
