import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { sandboxAvailability } from "../../src/sandbox/runtime.js";
import { gatehouse, project, put } from "./helpers.js";
import { gatehouseInProcess } from "./in-process.js";

const fixture = (name: string) => fileURLToPath(new URL(`fixtures/hooks/${name}`, import.meta.url));
/** What `hooks check` says of the sandbox in a project that does not configure it. */
const SANDBOX = ((a) => (a.available ? "on (the default)" : `unavailable: ${a.reason}`))(sandboxAvailability());

/** Hooks run as `bash <fixture>`: no dependency on the checkout keeping the executable bit. */
const hook = (name: string) => ({ type: "command", command: `bash ${fixture(name)}` });
const DENY_RM = hook("deny-rm.sh");
const ALLOW = hook("allow.sh");
const RECORD = hook("record.sh");

interface ListedHandler {
  event: string;
  matcher: string | null;
  source: string;
  file: string;
  path: string;
  dialect: string;
  type: string;
  command: string | null;
  url: string | null;
  timeoutMs: number;
  onFailure: string;
}

interface TestedHandler extends ListedHandler {
  exitCode: number | null;
  durationMs: number;
  decision: string | null;
  reason: string | null;
  error: string | null;
}

interface TestReport {
  event: string;
  payload: Record<string, unknown>;
  merged: { decision: string | null; reason: string | null; decidedBy: string | null; additionalContext?: string };
  handlers: TestedHandler[];
}

describe("gatehouse hooks", { concurrency: 4 }, () => {
  const dirs: { remove(): Promise<void> }[] = [];
  /** A project with its own empty home folder, so user and project settings are different files. */
  const fresh = async (files: Record<string, unknown> = {}) => {
    const p = await project(files);
    dirs.push(p);
    return { cwd: p.dir, env: { HOME: join(p.dir, "home") } };
  };
  after(() => Promise.all(dirs.map((d) => d.remove())));

  describe("list", () => {
    test("every handler by event, with source, dialect, type, command and timeout; --json is an array", async () => {
      const { cwd, env } = await fresh({
        "home/.claude/settings.json": { hooks: { Stop: [{ hooks: [{ ...ALLOW, timeout: 5 }] }] } },
        "home/.code_puppy/hooks.json": {
          PreToolUse: [{ matcher: "Read", hooks: [{ type: "command", command: "true" }] }],
        },
        ".claude/settings.json": { hooks: { PreToolUse: [{ matcher: "Bash", hooks: [DENY_RM] }] } },
        "gatehouse.json": {
          hooks: { UserPromptSubmit: [{ hooks: [RECORD] }] },
          commandHooks: { codePuppy: true },
        },
      });
      const settings = JSON.stringify({ hooks: { PreToolUse: [{ matcher: "Bash|Write", hooks: [ALLOW] }] } });
      const r = await gatehouse(["hooks", "list", "--settings", settings], { cwd, env });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stderr, "");
      const lines = r.stdout.trimEnd().split("\n");
      assert.match(lines[0] ?? "", /^EVENT\s+MATCHER\s+SOURCE\s+DIALECT\s+TYPE\s+COMMAND\/URL\s+TIMEOUT$/);
      // By event in the events' order, then in source order.
      const rows = lines.slice(1).map((l) => l.split(/\s{2,}/));
      assert.deepEqual(
        rows.map((cells) => [cells[0], cells[1], cells[2], cells[3], cells[4]]),
        [
          ["UserPromptSubmit", "-", "config", "claude", "command"],
          ["PreToolUse", "Bash", "project", "claude", "command"],
          ["PreToolUse", "Bash|Write", "cli", "claude", "command"],
          ["PreToolUse", "Read", "code-puppy", "code-puppy", "command"],
          ["Stop", "-", "user", "claude", "command"],
        ],
      );
      assert.equal(rows[1]?.[5], `bash ${fixture("deny-rm.sh")}`);
      assert.equal(rows[1]?.[6], "600s");
      assert.equal(rows[4]?.[6], "5s");
      assert.equal(rows[3]?.[6], "5s", "Code Puppy's default timeout");

      const json = await gatehouseInProcess(["hooks", "list", "--json", "--settings", settings], { cwd, env });
      assert.equal(json.code, 0, json.stderr);
      const listed = JSON.parse(json.stdout) as ListedHandler[];
      assert.ok(Array.isArray(listed));
      assert.equal(listed.length, 5);
      assert.deepEqual(listed[1], {
        event: "PreToolUse",
        matcher: "Bash",
        source: "project",
        file: join(".claude", "settings.json"),
        path: "hooks.PreToolUse[0].hooks[0]",
        dialect: "claude",
        type: "command",
        command: `bash ${fixture("deny-rm.sh")}`,
        url: null,
        timeoutMs: 600_000,
        onFailure: "continue",
      });
      assert.equal(listed[2]?.file, "--settings");
      assert.equal(listed[4]?.timeoutMs, 5000);
      assert.equal(listed[0]?.matcher, null);
    });

    test("no hooks: a note, or [] with --json; problems go to stderr and the list still prints", async () => {
      const { cwd, env } = await fresh();
      const r = await gatehouseInProcess(["hooks", "list"], { cwd, env });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, "no command hooks configured\n");
      const json = await gatehouseInProcess(["hooks", "list", "--json"], { cwd, env });
      assert.deepEqual(JSON.parse(json.stdout), []);

      await put(cwd, ".claude/settings.json", { hooks: { PreToolUse: [{ hooks: [DENY_RM] }], Bogus: [] } });
      const withError = await gatehouseInProcess(["hooks", "list", "--json"], { cwd, env });
      assert.equal(withError.code, 0);
      assert.equal((JSON.parse(withError.stdout) as unknown[]).length, 1);
      assert.match(withError.stderr, /^gatehouse: error: .*hooks\.Bogus: unknown event "Bogus"$/m);
    });

    test("a bad gatehouse.json exits 2", async () => {
      const { cwd, env } = await fresh({ "gatehouse.json": { hooks: { PreToolUse: "nope" } } });
      const r = await gatehouseInProcess(["hooks", "list"], { cwd, env });
      assert.equal(r.code, 2);
      assert.match(r.stderr, /gatehouse\.json:\d+:\d+: hooks\.PreToolUse/);
      assert.equal(r.stdout, "");
    });
  });

  describe("check", () => {
    test("clean settings: exit 0 and a summary", async () => {
      const { cwd, env } = await fresh({
        ".claude/settings.json": {
          hooks: {
            PreToolUse: [{ matcher: "Bash", hooks: [DENY_RM, ALLOW].map((h) => ({ ...h, onFailure: "block" })) }],
          },
        },
      });
      const r = await gatehouseInProcess(["hooks", "check"], { cwd, env });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, `no problems; 2 handlers; sandbox ${SANDBOX}\n`);
    });

    test("a note for each guard that fails open; commandHooks.onFailure closes them all, a handler's own onFailure wins", async () => {
      const guard = (extra: object = {}) => ({ type: "command", command: "true", ...extra });
      const settings = {
        hooks: {
          PreToolUse: [{ matcher: "Bash", hooks: [guard(), guard({ command: "false", onFailure: "continue" })] }],
          UserPromptSubmit: [{ hooks: [guard({ command: "true --prompt" })] }],
          // PostToolUseFailure withholds a failed tool's output, so it is a guard too.
          PostToolUseFailure: [{ hooks: [guard({ command: "true --failure" })] }],
          // Observers and Stop never block on a failure: no note.
          Notification: [{ hooks: [guard({ command: "true --notify" })] }],
          Stop: [{ hooks: [guard({ command: "true --stop" })] }],
        },
      };
      const open = await fresh({ ".claude/settings.json": settings });
      const r = await gatehouseInProcess(["hooks", "check"], open);
      assert.equal(r.code, 0, r.stderr);
      const file = join(".claude", "settings.json");
      const notes = r.stdout.split("\n").filter((l) => l.startsWith("note: "));
      assert.deepEqual(
        notes.map((l) => l.replace(/ guard fails open: .*/, "")),
        [
          `note: ${file}: hooks.PreToolUse[0].hooks[0]: PreToolUse`,
          `note: ${file}: hooks.PreToolUse[0].hooks[1]: PreToolUse`,
          `note: ${file}: hooks.UserPromptSubmit[0].hooks[0]: UserPromptSubmit`,
          `note: ${file}: hooks.PostToolUseFailure[0].hooks[0]: PostToolUseFailure`,
        ],
      );
      assert.match(notes[0] ?? "", /"commandHooks": \{"onFailure": "block"\} in gatehouse\.json/);
      assert.match(r.stdout, /^no problems; 6 handlers \(4 fail open\); sandbox /m);

      const closed = await fresh({
        ".claude/settings.json": settings,
        "gatehouse.json": { commandHooks: { onFailure: "block" } },
      });
      const c = await gatehouseInProcess(["hooks", "check", "--json"], closed);
      assert.equal(c.code, 0, c.stderr);
      const report = JSON.parse(c.stdout) as { failOpen: number; notes: { path: string; event: string }[] };
      assert.equal(report.failOpen, 1);
      assert.deepEqual(
        report.notes.map((n) => [n.path, n.event]),
        [["hooks.PreToolUse[0].hooks[1]", "PreToolUse"]],
      );
    });

    test("an unknown event and a bad regex are errors: each printed with file and path, exit 2", async () => {
      const { cwd, env } = await fresh({
        ".claude/settings.json": {
          hooks: {
            PreTooluse: [{ hooks: [DENY_RM] }],
            PostToolUse: [{ matcher: "Bash(", hooks: [ALLOW] }],
            Stop: [{ hooks: [ALLOW] }],
          },
        },
      });
      const r = await gatehouseInProcess(["hooks", "check"], { cwd, env });
      assert.equal(r.code, 2, r.stderr);
      const file = join(".claude", "settings.json");
      // Each problem names its line and column.
      assert.deepEqual(r.stdout.trimEnd().split("\n"), [
        `error: ${file}:3:5: hooks.PreTooluse: unknown event "PreTooluse" (did you mean "PreToolUse"?)`,
        `error: ${file}:15:9: hooks.PostToolUse[0].matcher: invalid regex "Bash(": Invalid regular expression: /Bash(/: Unterminated group; this group never runs`,
        `2 errors, 0 warnings; 1 handler; sandbox ${SANDBOX}`,
      ]);
    });

    test("warnings only: printed, exit 0", async () => {
      const { cwd, env } = await fresh({
        ".claude/settings.json": { hooks: { Setup: [{ hooks: [ALLOW] }], Stop: [{ hooks: [ALLOW] }] } },
      });
      const r = await gatehouseInProcess(["hooks", "check"], { cwd, env });
      assert.equal(r.code, 0, r.stderr);
      assert.match(
        r.stdout,
        /^warning: \.claude\/settings\.json:3:5: hooks\.Setup: Claude Code event "Setup" is not fired/m,
      );
      assert.match(r.stdout, /^0 errors, 1 warning; 1 handler; sandbox /m);
    });

    test("--json: { errors, warnings, handlers, disabled, managedOnly, diagnostics } with each problem's severity, file, path and message", async () => {
      const { cwd, env } = await fresh({
        ".claude/settings.json": {
          hooks: {
            PreTooluse: [{ hooks: [DENY_RM] }],
            Setup: [{ hooks: [ALLOW] }],
            Stop: [{ hooks: [ALLOW] }],
          },
        },
      });
      const r = await gatehouseInProcess(["hooks", "check", "--json"], { cwd, env });
      assert.equal(r.code, 2, r.stderr);
      const lines = r.stdout.split("\n").filter(Boolean);
      assert.equal(lines.length, 1, "one JSON line");
      const report = JSON.parse(lines[0] ?? "") as {
        errors: number;
        warnings: number;
        handlers: number;
        disabled: boolean;
        diagnostics: { severity: string; file: string; path: string; message: string }[];
        sandbox: { active: boolean; status: string };
      };
      const file = join(".claude", "settings.json");
      const { sandbox, ...rest } = report;
      assert.equal(sandbox.status, SANDBOX);
      assert.deepEqual(
        { ...rest, diagnostics: report.diagnostics.map(({ severity, file, path }) => ({ severity, file, path })) },
        {
          errors: 1,
          warnings: 1,
          handlers: 1,
          disabled: false,
          managedOnly: false,
          diagnostics: [
            { severity: "error", file, path: "hooks.PreTooluse" },
            { severity: "warning", file, path: "hooks.Setup" },
          ],
          failOpen: 0,
          notes: [],
        },
      );
      assert.match(
        report.diagnostics[0]?.message ?? "",
        /^unknown event "PreTooluse" \(did you mean "PreToolUse"\?\)$/,
      );

      const inline = await gatehouseInProcess(["hooks", "check", "--json", "--settings", '{"hooks": '], {
        cwd: (await fresh()).cwd,
      });
      assert.equal(inline.code, 2);
      const [bad] = (JSON.parse(inline.stdout) as { diagnostics: Record<string, unknown>[] }).diagnostics;
      assert.equal(bad?.file, "--settings");
      assert.equal(bad?.line, 1);
      assert.equal(typeof bad?.column, "number");

      const clean = await gatehouseInProcess(["hooks", "check", "--json"], { ...(await fresh()) });
      assert.equal(clean.code, 0, clean.stderr);
      assert.deepEqual(JSON.parse(clean.stdout), {
        errors: 0,
        warnings: 0,
        handlers: 0,
        disabled: false,
        managedOnly: false,
        diagnostics: [],
        failOpen: 0,
        notes: [],
        sandbox: { active: SANDBOX.startsWith("on"), status: SANDBOX },
      });
    });

    test("--settings inline JSON and file are checked after the other sources", async () => {
      const { cwd, env } = await fresh({
        "more/hooks.json": { hooks: { Stop: [{ hooks: [{ ...ALLOW, timout: 3 }] }] } },
      });
      const inline = await gatehouseInProcess(
        ["hooks", "check", "--settings", '{"hooks": {"Stop": [{"hooks": [{"type": 1}]}]'],
        {
          cwd,
          env,
        },
      );
      assert.equal(inline.code, 2);
      assert.match(inline.stdout, /^error: --settings:1:\d+: \(root\): invalid JSON/m);

      const file = await gatehouseInProcess(["hooks", "check", "--settings", "more/hooks.json"], { cwd, env });
      assert.equal(file.code, 0);
      assert.match(
        file.stdout,
        /^warning: more\/hooks\.json:9:13: hooks\.Stop\[0\]\.hooks\[0\]\.timout: unknown field "timout" for a command handler is ignored$/m,
      );

      const missing = await gatehouseInProcess(["hooks", "check", "--settings", "absent.json"], { cwd, env });
      assert.equal(missing.code, 2);
      assert.match(missing.stdout, /^error: absent\.json: \(root\): --settings file not found$/m);
    });
  });

  describe("test", () => {
    const guarded = () =>
      fresh({
        ".claude/settings.json": {
          hooks: {
            PreToolUse: [
              { matcher: "Bash", hooks: [DENY_RM] },
              { matcher: "Read", hooks: [ALLOW] },
            ],
          },
        },
      });

    test("PreToolUse --tool Bash --input -: each handler's verdict, then the merged one; exit 0", async () => {
      const { cwd, env } = await guarded();
      const input = JSON.stringify({ tool_input: { command: "rm -rf build" } });
      const r = await gatehouseInProcess(["hooks", "test", "PreToolUse", "--tool", "Bash", "--input", "-"], {
        cwd,
        env,
        input,
      });
      assert.equal(r.code, 0, r.stderr);
      const lines = r.stdout.trimEnd().split("\n");
      assert.equal(lines[0], 'PreToolUse (tool_name "Bash"): 1 handler');
      assert.match(lines[1] ?? "", /^SOURCE\s+COMMAND\/URL\s+EXIT\s+TIME\s+DECISION\s+REASON\s+ERROR$/);
      const cells = (lines[2] ?? "").split(/\s{2,}/);
      assert.deepEqual(
        [cells[0], cells[1], cells[2], cells[4], cells[5]],
        ["project", `bash ${fixture("deny-rm.sh")}`, "exit 2", "deny", "rm is not allowed here"],
      );
      assert.match(cells[3] ?? "", /^\d+ ms$/);
      assert.equal(lines[3], "merged: deny: rm is not allowed here");

      const harmless = JSON.stringify({ tool_input: { command: "ls" } });
      const ok = await gatehouseInProcess(["hooks", "test", "PreToolUse", "--tool", "Bash", "--input", "-"], {
        cwd,
        env,
        input: harmless,
      });
      assert.equal(ok.code, 0, ok.stderr);
      assert.match(ok.stdout, /^project\s+bash \S+deny-rm\.sh\s+exit 0\s+\d+ ms\s+-$/m);
      assert.match(ok.stdout, /^merged: no decision$/m);
    });

    test("--json: { event, payload, merged, handlers } with the handler's exit code, duration and verdict", async () => {
      const { cwd, env } = await guarded();
      const r = await gatehouseInProcess(["hooks", "test", "PreToolUse", "--tool", "Read", "--json"], { cwd, env });
      assert.equal(r.code, 0, r.stderr);
      const report = JSON.parse(r.stdout) as TestReport;
      assert.equal(report.event, "PreToolUse");
      assert.equal(report.payload.tool_name, "Read");
      assert.equal(report.merged.decision, "allow");
      assert.equal(report.merged.reason, "reads are fine");
      assert.equal(report.merged.additionalContext, "checked by allow.sh");
      assert.equal(report.merged.decidedBy, "project:hooks.PreToolUse[1].hooks[0]");
      assert.equal(report.handlers.length, 1);
      const [h] = report.handlers;
      assert.equal(h?.source, "project");
      assert.equal(h?.command, `bash ${fixture("allow.sh")}`);
      assert.equal(h?.exitCode, 0);
      assert.equal(typeof h?.durationMs, "number");
      assert.equal(h?.decision, "allow");
      assert.equal(h?.reason, "reads are fine");
      assert.equal(h?.error, null);
    });

    test("output over the cap is said to be truncated, with the bytes dropped, in the table and in --json", async () => {
      const flood = { type: "command", command: "cat > /dev/null; head -c 1500000 /dev/zero | tr '\\0' x" };
      const { cwd, env } = await fresh({ ".claude/settings.json": { hooks: { Stop: [{ hooks: [flood, ALLOW] }] } } });
      const dropped = 1500000 - 1024 * 1024;
      const r = await gatehouseInProcess(["hooks", "test", "Stop"], { cwd, env });
      assert.equal(r.code, 0, r.stderr);
      const notes = r.stdout.split("\n").filter((l) => l.startsWith("truncated: "));
      assert.deepEqual(notes, [
        `truncated: ${flood.command}: output over the 1 MiB cap; ${dropped} bytes dropped, the verdict read from what was kept`,
      ]);

      const asJson = await gatehouseInProcess(["hooks", "test", "Stop", "--json"], { cwd, env });
      assert.equal(asJson.code, 0, asJson.stderr);
      const handlers = (JSON.parse(asJson.stdout) as { handlers: { truncated: boolean; droppedBytes: number }[] })
        .handlers;
      assert.deepEqual(
        handlers.map((h) => [h.truncated, h.droppedBytes]),
        [
          [true, dropped],
          [false, 0],
        ],
      );
    });

    test("the payload: buildPayload's fields, session hooks-test, an empty transcript file, cwd the project", async () => {
      const { cwd, env } = await fresh({ ".claude/settings.json": { hooks: { PreToolUse: [{ hooks: [RECORD] }] } } });
      await put(cwd, "input.json", { tool_input: { command: "ls" }, tool_use_id: "toolu_given" });
      const r = await gatehouseInProcess(["hooks", "test", "PreToolUse", "--input", "input.json"], { cwd, env });
      assert.equal(r.code, 0, r.stderr);
      const seen = JSON.parse(await readFile(join(cwd, "payload.json"), "utf8")) as Record<string, unknown>;
      assert.equal(seen.hook_event_name, "PreToolUse");
      assert.equal(seen.session_id, "hooks-test");
      assert.equal(seen.cwd, cwd);
      assert.equal(seen.permission_mode, "default");
      assert.equal(seen.tool_name, "Bash", "tool events default to Bash");
      assert.deepEqual(seen.tool_input, { command: "ls" });
      assert.equal(seen.tool_use_id, "toolu_given");
      const recorded = await readFile(join(cwd, "env.txt"), "utf8");
      assert.match(recorded, /^session=hooks-test$/m);
      assert.match(recorded, /^transcript=file$/m);
      assert.match(recorded, new RegExp(`^cwd=${cwd}$`, "m"));
      assert.equal(existsSync(String(seen.transcript_path)), false, "the temporary transcript is removed afterwards");
    });

    test("a reason never contains the hook's command line", async () => {
      const leak = { type: "command", command: `bash ${fixture("leak.sh")} --token-file /secret/path` };
      const { cwd, env } = await fresh({ ".claude/settings.json": { hooks: { PreToolUse: [{ hooks: [leak] }] } } });
      const r = await gatehouseInProcess(["hooks", "test", "PreToolUse", "--json"], { cwd, env });
      assert.equal(r.code, 0, r.stderr);
      const report = JSON.parse(r.stdout) as TestReport;
      assert.equal(report.handlers[0]?.exitCode, 2);
      assert.equal(report.handlers[0]?.decision, "deny");
      for (const reason of [report.handlers[0]?.reason, report.merged.reason]) {
        assert.equal(typeof reason, "string");
        assert.ok(!reason?.includes("/secret/path"), reason ?? "");
        assert.ok(!reason?.includes(fixture("leak.sh")), reason ?? "");
      }
      const text = await gatehouseInProcess(["hooks", "test", "PreToolUse"], { cwd, env });
      const merged = text.stdout.split("\n").find((l) => l.startsWith("merged:")) ?? "";
      assert.match(merged, /^merged: deny: /);
      assert.ok(!merged.includes("/secret/path"), merged);
    });

    test("no matching handler: said so, no decision, exit 0", async () => {
      const { cwd, env } = await guarded();
      const r = await gatehouseInProcess(["hooks", "test", "PreToolUse", "--tool", "Write"], { cwd, env });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, 'no handler matches PreToolUse (tool_name "Write")\nmerged: no decision\n');
      const json = await gatehouseInProcess(["hooks", "test", "Stop", "--json"], { cwd, env });
      assert.deepEqual((JSON.parse(json.stdout) as TestReport).handlers, []);
    });

    test("--settings adds handlers for the test too", async () => {
      const { cwd, env } = await fresh();
      const settings = JSON.stringify({ hooks: { UserPromptSubmit: [{ hooks: [hook("block-prompt.sh")] }] } });
      const r = await gatehouseInProcess(["hooks", "test", "UserPromptSubmit", "--settings", settings, "--json"], {
        cwd,
        env,
      });
      assert.equal(r.code, 0, r.stderr);
      const report = JSON.parse(r.stdout) as TestReport;
      assert.equal(report.handlers[0]?.source, "cli");
      assert.equal(report.merged.decision, "block");
      assert.equal(report.merged.reason, "prompts are closed today");
    });

    test("bad input exits 2: unknown event, invalid or non-object --input, a missing file, --tool on Stop", async () => {
      const { cwd, env } = await guarded();
      const cases: [string[], string | undefined, RegExp][] = [
        [["Bogus"], undefined, /unknown event "Bogus"; expected one of SessionStart, .*PreToolUse/],
        [["PreToolUse", "--input", "-"], "{ not json", /--input \(stdin\):1:3: invalid JSON/],
        [["PreToolUse", "--input", "-"], "[1, 2]", /--input \(stdin\): expected a JSON object/],
        [["PreToolUse", "--input", "-"], '{"tool_name": 7}', /--input: tool_name must be a string/],
        [["PreToolUse", "--input", "absent.json"], undefined, /--input absent\.json: no such file/],
        [["Stop", "--tool", "Bash"], undefined, /--tool: Stop is not a tool event/],
      ];
      for (const [args, input, message] of cases) {
        const r = await gatehouseInProcess(["hooks", "test", ...args], {
          cwd,
          env,
          ...(input === undefined ? {} : { input }),
        });
        assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
        assert.match(r.stderr, message);
        assert.equal(r.stdout, "");
      }
    });

    test("--help documents the payload and the exit statuses", async () => {
      const { cwd, env } = await fresh();
      const r = await gatehouseInProcess(["hooks", "test", "--help"], { cwd, env });
      assert.equal(r.code, 0);
      assert.match(r.stdout, /--input <file\|->/);
      assert.match(r.stdout, /--tool <name>/);
      assert.match(r.stdout, /Exit status:\n\s+0\s+the handlers ran[^\n]*\n\s+2\s+bad input/);
      const check = await gatehouseInProcess(["hooks", "check", "--help"], { cwd, env });
      assert.match(check.stdout, /0\s+no errors \(warnings are printed\)/);
    });
  });

  describe("run --settings", () => {
    test("inline JSON and a file add hooks after gatehouse.json's: a UserPromptSubmit exit 2 blocks", async () => {
      const { cwd, env } = await fresh({ "gatehouse.json": { model: "scripted:echo" } });
      const block = { hooks: { UserPromptSubmit: [{ hooks: [hook("block-prompt.sh")] }] } };
      const inline = await gatehouseInProcess(["run", "-p", "hello", "--settings", JSON.stringify(block)], {
        cwd,
        env,
      });
      assert.equal(inline.code, 3, inline.stderr);
      assert.equal(inline.stdout, "prompts are closed today\n");

      await put(cwd, "conf/block.json", block);
      const file = await gatehouseInProcess(["run", "-p", "hello", "--settings", "conf/block.json"], { cwd, env });
      assert.equal(file.code, 3, file.stderr);
      assert.equal(file.stdout, "prompts are closed today\n");
    });

    test("hook settings with an error: printed, exit 2, no run; warnings are printed and the run goes on", async () => {
      const { cwd, env } = await fresh({ "gatehouse.json": { model: "scripted:echo" } });
      const broken = await gatehouseInProcess(
        ["run", "-p", "hello", "--settings", '{"hooks": {"UserPromptSubmt": []}}'],
        {
          cwd,
          env,
        },
      );
      assert.equal(broken.code, 2);
      assert.equal(broken.stdout, "");
      assert.match(broken.stderr, /^gatehouse: error: --settings: hooks\.UserPromptSubmt: unknown event/m);
      assert.match(broken.stderr, /^gatehouse: settings: an error in the hook or permission settings; not running/m);
      assert.equal(existsSync(join(cwd, ".gatehouse")), false, "nothing ran, nothing was stored");

      const missing = await gatehouseInProcess(["run", "-p", "hello", "--settings", "absent.json"], { cwd, env });
      assert.equal(missing.code, 2);
      assert.match(missing.stderr, /absent\.json: \(root\): --settings file not found/);

      // The same rule for every source, not only --settings.
      await put(cwd, ".claude/settings.json", { hooks: { PreToolUse: [{ matcher: "(", hooks: [DENY_RM] }] } });
      const fromProject = await gatehouseInProcess(["run", "-p", "hello"], { cwd, env });
      assert.equal(fromProject.code, 2);
      assert.match(fromProject.stderr, /invalid regex/);

      await put(cwd, ".claude/settings.json", { hooks: { Setup: [{ hooks: [ALLOW] }] } });
      const warned = await gatehouseInProcess(["run", "-p", "hello"], { cwd, env });
      assert.equal(warned.code, 0, warned.stderr);
      assert.equal(warned.stdout, "hello\n");
      assert.match(warned.stderr, /^gatehouse: warning: .*hooks\.Setup: Claude Code event "Setup" is not fired/m);
    });
  });

  test("hooks.ts loads nothing heavy at start-up (main.ts registers it before parsing)", async () => {
    const source = await readFile(new URL("../../src/cli/hooks.ts", import.meta.url), "utf8");
    const runtime = [...source.matchAll(/^import\s+(?!type\b)[^;]*?from\s+"([^"]+)"/gm)].map((m) => m[1]);
    for (const specifier of runtime) {
      assert.ok(
        // common.ts is the light module every command's registration shares (commander's types, exit help).
        specifier === "./exit.js" ||
          specifier === "./paths.js" ||
          specifier === "./common.js" ||
          specifier?.startsWith("node:"),
        `hooks.ts imports ${specifier} eagerly`,
      );
    }
  });
});
