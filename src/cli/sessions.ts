// `gatehouse sessions list | show | export | rm`. main.ts loads this module at start-up to register
// the commands, so its own imports stay light (commander's types, the exit codes, pure helpers):
// the config, the store and the runtime are imported when a command runs.
import type { Command } from "commander";
import { Option } from "commander";
import type { Message, Part } from "../core/message.js";
import type { CompactionSummary, Run, Session, SessionListing, SessionStore } from "../store/types.js";
import { COLOR_HELP, type CommandHost, exitHelp, PROCESS_HOST, projectOptions, STORE_FAILED } from "./common.js";
import { EXIT, type ExitCode } from "./exit.js";
import { clip, duration, shortTime, table } from "./format.js";
import type { CommandIO, Project, ProjectFlags } from "./project.js";
import { terminalText } from "./terminal.js";

export interface SessionsListFlags extends ProjectFlags {
  readonly json?: boolean;
  readonly limit?: string;
  readonly all?: boolean;
}

export interface SessionsShowFlags extends ProjectFlags {
  readonly json?: boolean;
}

export interface SessionsExportFlags extends ProjectFlags {
  readonly format: "jsonl" | "md";
}

const NOT_FOUND = `no such session, or ${STORE_FAILED}`;

/** Adds `gatehouse sessions` and its subcommands to the program. */
export function registerSessionsCommand(program: Command, host: CommandHost = PROCESS_HOST): void {
  const sessions = program
    .command("sessions")
    .summary("list, show, export and delete stored sessions")
    .description("List, show, export and delete the sessions in the project's store (as gatehouse run finds it).");

  projectOptions(sessions.command("list"))
    .summary("the sessions, most recently updated first")
    .description(`The sessions, most recently updated first. ${COLOR_HELP}`)
    .option("--limit <n>", "at most this many sessions", "50")
    .option("--all", "include sub-agent sessions")
    .option("--json", "print a JSON array instead of a table")
    .addHelpText("after", exitHelp({ usage: "GATEHOUSE_DATABASE_URL" }))
    .action(async (flags: SessionsListFlags) => {
      host.exit(await sessionsList(flags, host.io()));
    });

  projectOptions(sessions.command("show"))
    .summary("a session's runs and messages")
    .description(
      `A session's runs (status, trigger, time) and messages (role and text; tool calls and results summarized). ${COLOR_HELP}`,
    )
    .argument("<id>", "the session id")
    .option("--json", "print { session, runs, messages, compactions, subagentSessions } as JSON")
    .addHelpText("after", exitHelp({ failed: NOT_FOUND, usage: "GATEHOUSE_DATABASE_URL" }))
    .action(async (id: string, flags: SessionsShowFlags) => {
      host.exit(await sessionsShow(id, flags, host.io()));
    });

  projectOptions(sessions.command("export"))
    .summary("a session as JSONL records or a Markdown transcript")
    .description(
      "Print a session: jsonl is every stored record (session, runs, messages, compactions, pending injections, audit), one JSON object a line; md is a readable transcript.",
    )
    .argument("<id>", "the session id")
    .addOption(new Option("--format <format>", "output format").choices(["jsonl", "md"]).default("jsonl"))
    .addHelpText("after", exitHelp({ failed: NOT_FOUND, usage: "GATEHOUSE_DATABASE_URL" }))
    .action(async (id: string, flags: SessionsExportFlags) => {
      host.exit(await sessionsExport(id, flags, host.io()));
    });

  projectOptions(sessions.command("rename"))
    .summary("give a session a title (an empty title goes back to its first prompt)")
    .description(
      "Give a session a title, shown by sessions list and the --resume picker (and the server's API). Without one, a session is titled by its first stored prompt; an empty title clears the one given.",
    )
    .argument("<id>", "the session id")
    .argument("<title>", "one line, at most 500 characters; empty to clear")
    .addHelpText("after", exitHelp({ failed: NOT_FOUND, usage: "a title of several lines or over 500 characters" }))
    .action(async (id: string, title: string, flags: ProjectFlags) => {
      host.exit(await sessionsRename(id, title, flags, host.io()));
    });

  projectOptions(sessions.command("rm"))
    .summary("delete a session, its sub-agent sessions and their messages")
    .description(
      "Delete a session with its sub-agent sessions, runs, messages, summaries and transcripts (audit records stay). The project's plugins and command hooks are loaded first and see session_end (SessionEnd) for it.",
    )
    .argument("<id>", "the session id")
    .addHelpText(
      "after",
      exitHelp({ failed: NOT_FOUND, usage: "GATEHOUSE_DATABASE_URL, a configured plugin that cannot be loaded" }),
    )
    .action(async (id: string, flags: ProjectFlags) => {
      host.exit(await sessionsRm(id, flags, host.io()));
    });
}

async function lib() {
  const [project, output] = await Promise.all([import("./project.js"), import("./output.js")]);
  return { ...project, ...output };
}
type Lib = Awaited<ReturnType<typeof lib>>;

/** Runs `body` with the project's store open; a `CliStop` becomes its message and exit status. */
async function withStore(
  flags: ProjectFlags,
  io: CommandIO,
  body: (L: Lib, store: SessionStore, project: Project) => Promise<ExitCode>,
): Promise<ExitCode> {
  const L = await lib();
  return L.runCli(io, async () => {
    const project = await L.loadProject(flags, io);
    return L.withProjectStore(project, io, (store) => body(L, store, project));
  });
}

function positiveInt(L: Lib, flag: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new L.CliStop(EXIT.usage, `${flag}: expected a whole number from 1`);
  return n;
}

function notFound(L: Lib, id: string): never {
  throw new L.CliStop(EXIT.failed, `no session "${L.terminalLine(id)}" in this project's store`);
}

// ---- list -----------------------------------------------------------------------------------

/** A session as `sessions list --json` shows it: `title` is the one given, else the first stored prompt. */
function listed(s: SessionListing, first: string | null) {
  return {
    id: s.id,
    title: s.title ?? first,
    firstPrompt: first,
    key: s.key,
    parentSessionId: s.parentSessionId,
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
    runCount: s.runCount,
    messageCount: s.messageCount,
  };
}

/** `gatehouse sessions list`. */
export function sessionsList(flags: SessionsListFlags, io: CommandIO): Promise<ExitCode> {
  return withStore(flags, io, async (L, store) => {
    const limit = positiveInt(L, "--limit", flags.limit, 50);
    const found = await store.listSessions({ limit, ...(flags.all ? {} : { parentSessionId: null }) });
    const { firstPrompt } = await import("./resume.js");
    const firsts = new Map<string, string | null>();
    for (const s of found) firsts.set(s.id, await firstPrompt(store, s.id));
    if (flags.json) {
      await L.writeJson(
        io.stdout,
        found.map((s) => listed(s, firsts.get(s.id) ?? null)),
      );
      return EXIT.ok;
    }
    if (found.length === 0) {
      await L.writeOut(io.stdout, "no sessions\n");
      return EXIT.ok;
    }
    const c = L.colorsFor(io.stdout, io.env);
    const header = ["ID", "UPDATED", "RUNS", "MESSAGES", "KEY", ...(flags.all ? ["PARENT"] : []), "TITLE"];
    const rows = found.map((s) => [
      L.terminalLine(s.id),
      shortTime(s.updatedAt),
      String(s.runCount),
      String(s.messageCount),
      s.key === null ? "-" : L.terminalLine(s.key),
      ...(flags.all ? [s.parentSessionId === null ? "-" : L.terminalLine(s.parentSessionId)] : []),
      clip(s.title ?? firsts.get(s.id) ?? "-", 60),
    ]);
    await L.writeOut(
      io.stdout,
      table([header, ...rows], (cell, row, column) => (row === 0 ? c.bold(cell) : column === 1 ? c.dim(cell) : cell)),
    );
    return EXIT.ok;
  });
}

// ---- rename ---------------------------------------------------------------------------------

/** `gatehouse sessions rename ID TITLE`. */
export function sessionsRename(id: string, title: string, flags: ProjectFlags, io: CommandIO): Promise<ExitCode> {
  return withStore(flags, io, async (L, store) => {
    const given = title.trim();
    if (given.length > 500 || /[\n\r]/.test(given))
      throw new L.CliStop(EXIT.usage, "title: expected one line of at most 500 characters");
    // A project without a store file has no sessions: the id is not found, and nothing is created.
    if (!(await store.setSessionTitle(id, given === "" ? null : given))) notFound(L, id);
    await L.writeOut(
      io.stdout,
      given === ""
        ? `session ${L.terminalLine(id)}: title cleared\n`
        : `session ${L.terminalLine(id)}: ${L.terminalLine(given)}\n`,
    );
    return EXIT.ok;
  });
}

// ---- show -----------------------------------------------------------------------------------

interface SessionView {
  readonly session: Session;
  readonly runs: readonly Run[];
  readonly messages: readonly Message[];
  readonly compactions: readonly CompactionSummary[];
  readonly subagentSessions: readonly string[];
}

async function sessionView(L: Lib, store: SessionStore, id: string): Promise<SessionView> {
  const detail = await store.showSession(id);
  if (!detail) notFound(L, id);
  const messages: Message[] = [];
  for (let afterSeq = 0; ; ) {
    const page = await store.sessionMessages(id, { afterSeq, limit: 500 });
    messages.push(...page);
    const last = page.at(-1);
    if (page.length < 500 || last === undefined) break;
    afterSeq = last.seq;
  }
  const children = await store.listSessions({ parentSessionId: id, limit: 10_000 });
  return {
    session: detail.session,
    runs: detail.runs,
    messages,
    compactions: detail.compactions,
    subagentSessions: children.map((s) => s.id),
  };
}

/** `gatehouse sessions show ID`. */
export function sessionsShow(id: string, flags: SessionsShowFlags, io: CommandIO): Promise<ExitCode> {
  return withStore(flags, io, async (L, store) => {
    const view = await sessionView(L, store, id);
    if (flags.json) {
      await L.writeJson(io.stdout, view);
      return EXIT.ok;
    }
    await L.writeOut(io.stdout, renderShow(L, view, L.colorsFor(io.stdout, io.env)));
    return EXIT.ok;
  });
}

type Colors = ReturnType<Lib["colorsFor"]>;

function renderShow(L: Lib, view: SessionView, c: Colors): string {
  const { session } = view;
  const out: string[] = [];
  out.push(`${c.bold("Session")} ${L.terminalLine(session.id)}\n`);
  const facts: [string, string][] = [
    ["created", shortTime(session.createdAt)],
    ["updated", shortTime(session.updatedAt)],
  ];
  if (session.title !== undefined) facts.push(["title", L.terminalLine(session.title)]);
  if (session.key !== null) facts.push(["key", L.terminalLine(session.key)]);
  if (session.parentSessionId !== null) facts.push(["parent", L.terminalLine(session.parentSessionId)]);
  if (view.subagentSessions.length > 0)
    facts.push(["sub-agents", view.subagentSessions.map(L.terminalLine).join(", ")]);
  for (const c2 of view.compactions)
    facts.push(["compacted", `messages ${c2.fromSeq}-${c2.toSeq} into a summary (${shortTime(c2.createdAt)})`]);
  out.push(table(facts.map(([k, v]) => [`  ${k}`, v])));

  out.push(`\n${c.bold(`Runs (${view.runs.length})`)}\n`);
  if (view.runs.length > 0) {
    const rows = view.runs.map((r) => [
      `  ${r.seq}`,
      runStatus(r),
      r.trigger + (r.depth > 0 ? ` (depth ${r.depth})` : ""),
      r.model === undefined ? "-" : clip(r.model, 40),
      r.usage?.totalTokens === undefined ? "-" : String(r.usage.totalTokens),
      shortTime(r.startedAt),
      r.endedAt === null ? "-" : duration(Date.parse(r.endedAt) - Date.parse(r.startedAt)),
      r.id,
    ]);
    out.push(
      table(
        [["  #", "STATUS", "TRIGGER", "MODEL", "TOKENS", "STARTED", "TOOK", "RUN ID"], ...rows],
        (cell, row, column) =>
          row === 0 ? c.bold(cell) : column === 1 ? statusColor(c, cell) : column >= 5 ? c.dim(cell) : cell,
      ),
    );
  }

  out.push(`\n${c.bold(`Messages (${view.messages.length})`)}\n`);
  const seqWidth = String(view.messages.at(-1)?.seq ?? 0).length;
  const indent = " ".repeat(2 + seqWidth + 2 + 9 + 2);
  for (const m of view.messages) {
    const [first = "", ...rest] = messageLines(m, c);
    out.push(`  ${c.dim(String(m.seq).padStart(seqWidth))}  ${roleColor(c, m.role, m.role.padEnd(9))}  ${first}\n`);
    for (const line of rest) out.push(`${indent}${line}\n`);
  }
  return out.join("");
}

/** What a stored message says, as lines: text in full, tool calls and results summarized. */
function messageLines(m: Message, c: Colors): string[] {
  const lines: string[] = [];
  for (const part of m.parts) {
    if (part.type === "text") lines.push(...terminalText(part.text).split("\n"));
    else lines.push(c.dim(partSummary(part)));
  }
  const blocked = blockedNote(m);
  if (blocked) lines.push(c.yellow(`[${blocked}]`));
  if (lines.length === 0) lines.push(c.dim("(empty)"));
  return lines;
}

/** One line for a non-text part. */
function partSummary(part: Exclude<Part, { type: "text" }>): string {
  switch (part.type) {
    case "reasoning":
      return `(reasoning, ${part.text.length} characters)`;
    case "tool_call":
      return `→ ${clip(part.toolName, 60)} ${clip(JSON.stringify(part.input) ?? "", 160)}`;
    case "tool_result": {
      const text = typeof part.output === "string" ? part.output : (JSON.stringify(part.output) ?? "");
      const lines = text.split("\n").length;
      return `← ${clip(part.toolName, 60)}${part.isError ? " (error)" : ""}: ${clip(text, 160)}${lines > 1 ? ` (${lines} lines)` : ""}`;
    }
    case "image":
      return `[image ${clip(part.mediaType, 40)}]`;
    case "file":
      return `[file ${clip(part.filename ?? part.mediaType, 80)}]`;
  }
}

/** `blocked by policy at before_agent_run` when the message is a block notice. */
function blockedNote(m: Message): string | undefined {
  const by = m.metadata.blockedBy;
  const hook = m.metadata.hook;
  if (typeof by !== "string") return undefined;
  // Gatehouse's own clean-up after a run that did not finish is no policy decision.
  if (by === "gatehouse" && hook === "recovery") return "interrupted: its unchecked output was removed";
  return `blocked by ${clip(by, 60)}${typeof hook === "string" ? ` at ${clip(hook, 40)}` : ""}`;
}

/** A run's status with why it ended, when the store knows: `failed (rate_limit)`, `failed (max_steps)`, `failed (interrupted)`. */
function runStatus(r: { readonly status: string; readonly detail?: string; readonly errorKind?: string }): string {
  const why = r.detail ?? r.errorKind;
  return why === undefined ? r.status : `${r.status} (${clip(why, 30)})`;
}

function statusColor(c: Colors, cell: string): string {
  const status = cell.trim().replace(/ \(.*\)$/, "");
  if (status === "completed" || status === "claimed") return c.green(cell);
  if (status === "blocked") return c.yellow(cell);
  if (status === "failed" || status === "cancelled") return c.red(cell);
  return cell;
}

function roleColor(c: Colors, role: string, cell: string): string {
  if (role === "user") return c.cyan(cell);
  if (role === "assistant") return c.green(cell);
  return c.dim(cell);
}

// ---- export ---------------------------------------------------------------------------------

/** `gatehouse sessions export ID [--format jsonl|md]`. */
export function sessionsExport(id: string, flags: SessionsExportFlags, io: CommandIO): Promise<ExitCode> {
  return withStore(flags, io, async (L, store) => {
    if (flags.format === "md") {
      const view = await sessionView(L, store, id);
      await L.writeOut(io.stdout, renderMarkdown(view));
      return EXIT.ok;
    }
    if (!(await store.getSession(id))) notFound(L, id);
    // Streamed a line at a time: a long session is never held in memory as one string.
    for await (const line of store.exportSession(id)) {
      if (!io.stdout.write(line)) await new Promise<void>((resolve) => io.stdout.write("", () => resolve()));
    }
    await L.writeOut(io.stdout, "");
    return EXIT.ok;
  });
}

/** A readable transcript: one section per run, each message under its role, tool traffic in code blocks. */
export function renderMarkdown(view: SessionView): string {
  const { session } = view;
  const runs = new Map(view.runs.map((r) => [r.id, r]));
  const out: string[] = [`# Session ${inline(session.id)}\n\n`];
  out.push(`- Created: ${shortTime(session.createdAt)}\n`);
  out.push(`- Updated: ${shortTime(session.updatedAt)}\n`);
  if (session.key !== null) out.push(`- Key: ${inline(session.key)}\n`);
  if (session.parentSessionId !== null) out.push(`- Parent session: ${inline(session.parentSessionId)}\n`);
  out.push(`- Runs: ${view.runs.length}, messages: ${view.messages.length}\n`);
  if (view.subagentSessions.length > 0)
    out.push(`- Sub-agent sessions: ${view.subagentSessions.map(inline).join(", ")}\n`);
  let current: string | null | undefined;
  for (const m of view.messages) {
    if (m.runId !== current) {
      current = m.runId;
      const run = m.runId === null ? undefined : runs.get(m.runId);
      out.push(
        run
          ? `\n## Run ${run.seq} · ${runStatus(run)} · ${run.trigger} · ${shortTime(run.startedAt)}\n`
          : "\n## Outside any run\n",
      );
    }
    out.push(`\n**${ROLE_TITLE[m.role] ?? m.role}:**\n\n`);
    const blocked = blockedNote(m);
    for (const part of m.parts) out.push(markdownPart(part));
    if (blocked) out.push(`_(${blocked})_\n\n`);
  }
  return out.join("").replace(/\n{3,}/g, "\n\n");
}

const ROLE_TITLE: Record<string, string> = {
  user: "User",
  assistant: "Assistant",
  tool: "Tool",
  system: "System",
  summary: "Summary",
};

function markdownPart(part: Part): string {
  switch (part.type) {
    case "text":
      return `${terminalText(part.text).trim()}\n\n`;
    case "reasoning":
      return `<details><summary>Reasoning</summary>\n\n${terminalText(part.text).trim()}\n\n</details>\n\n`;
    case "tool_call":
      return `Tool call ${inline(part.toolName)}:\n\n${fence(JSON.stringify(part.input, null, 2) ?? "", "json")}`;
    case "tool_result": {
      const text = typeof part.output === "string" ? part.output : (JSON.stringify(part.output, null, 2) ?? "");
      return `Result of ${inline(part.toolName)}${part.isError ? " (error)" : ""}:\n\n${fence(text, "")}`;
    }
    case "image":
      return `_[image ${part.mediaType}]_\n\n`;
    case "file":
      return `_[file ${part.filename ?? part.mediaType}]_\n\n`;
  }
}

/** A code fence longer than any backtick run inside, so the content cannot close it. */
function fence(text: string, lang: string): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const ticks = "`".repeat(longest + 1);
  return `${ticks}${lang}\n${terminalText(text).replace(/\n$/, "")}\n${ticks}\n\n`;
}

/** Inline code, safe for any content. */
function inline(text: string): string {
  const flat = clip(text, 200);
  const longest = Math.max(0, ...[...flat.matchAll(/`+/g)].map((m) => m[0].length));
  const ticks = "`".repeat(longest + 1);
  return longest > 0 ? `${ticks} ${flat} ${ticks}` : `${ticks}${flat}${ticks}`;
}

// ---- rm -------------------------------------------------------------------------------------

/**
 * `gatehouse sessions rm ID`. The project's plugins and command hooks are loaded (no model) so
 * that `session_end` fires for the session before it goes, as the catalog promises.
 */
export function sessionsRm(id: string, flags: ProjectFlags, io: CommandIO): Promise<ExitCode> {
  return withStore(flags, io, async (L, store, project) => {
    const session = await store.getSession(id);
    if (!session) notFound(L, id);
    const log = L.createCliLogger(io.stderr, io.env);
    const gatehouse = await L.startHooks(project, io, store, log);
    try {
      const missing = gatehouse.plugins.diagnostics.filter((d) => L.PLUGIN_NOT_LOADED.has(d.code));
      if (missing.length > 0) {
        const ids = [...new Set(missing.map((d) => d.pluginId))].map((p) => L.terminalLine(p));
        throw new L.CliStop(
          EXIT.usage,
          `${ids.length === 1 ? `plugin ${ids[0]} was` : `plugins ${ids.join(", ")} were`} not loaded; not deleting without the configured plugins`,
        );
      }
      // A run of this session in another process finishes first: deleting under it would
      // leave that run writing into a session that no longer exists.
      const lock = await store.acquireRunLock(session.id);
      try {
        await gatehouse.endSession(session.id, "deleted");
        if (!(await store.deleteSession(session.id))) notFound(L, id);
      } finally {
        await lock.release();
      }
    } finally {
      await gatehouse.close().catch((error: unknown) => log.warn(`while closing: ${L.describe(error)}`));
    }
    await L.writeOut(io.stdout, `deleted session ${L.terminalLine(session.id)}\n`);
    return EXIT.ok;
  });
}
