// `gatehouse init`: a starter project. Node builtins only, so registering it costs nothing.
import { constants } from "node:fs";
import { access, appendFile, mkdir, readFile, unlink, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import type { Command } from "commander";
import { PACKAGE_NAME } from "../version.js";
import { type CommandHost, exitHelp, PROCESS_HOST } from "./common.js";
import { EXIT, type ExitCode } from "./exit.js";
import type { CommandIO } from "./project.js";

/** Where editors find the schema once Gatehouse is installed in the project. */
export const SCHEMA_REF = `./node_modules/${PACKAGE_NAME}/schema/gatehouse.schema.json`;

const CONFIG = {
  $schema: SCHEMA_REF,
  $comment: [
    "Gatehouse project configuration. $schema lets your editor explain and complete every key.",
    "model: scripted:echo answers with your prompt, offline. For a real model write e.g. anthropic:claude-sonnet-4-5 and set ANTHROPIC_API_KEY. --model and GATEHOUSE_MODEL override this file (flags > environment > this file > defaults).",
    "plugins: files (relative to this file) or packages. plugins/example.ts blocks prompts that ask for credentials and redacts e-mail addresses; allowConversationAccess lets a plugin loaded from a file use the hooks that read the conversation.",
    "Command hooks in Claude Code's format live in .claude/settings.json (or in a hooks block here); hooks/example-hook.sh refuses Bash commands that run rm -rf.",
    "Permissions as in Claude Code: .claude/settings.json has a permissions block (allow, ask, deny rules such as Bash(npm test:*)); reads run, Bash and edits ask, and a run without a terminal denies what would ask. See them with: npx gatehouse permissions",
    `Reference: node_modules/${PACKAGE_NAME}/docs/configuration.md. Check what a run will use with: npx gatehouse config`,
  ],
  model: "scripted:echo",
  plugins: [{ path: "./plugins/example.ts", hooks: { allowConversationAccess: true } }],
};

const PLUGIN = `// An example Gatehouse plugin. Handlers are typed from the hook catalog: see
// node_modules/${PACKAGE_NAME}/docs/hooks.md for every hook, its event and what it may return.
import type { PluginDefinition } from "${PACKAGE_NAME}";

const plugin: PluginDefinition = {
  id: "example",
  setup(api) {
    // A gate, before the model is called. A block ends the turn: the user sees \`message\`;
    // \`reason\` is for you, and is never shown, logged or stored.
    api.on("before_agent_run", (event) =>
      /\\b(password|api[ _-]?key)s?\\b/i.test(event.prompt)
        ? {
            outcome: "block",
            reason: "the prompt asks for credentials",
            message: "I can't help with credentials.",
            category: "credentials",
          }
        : { outcome: "pass" },
    );

    // A rewrite of every assistant text of the run, before it is stored as final and delivered.
    api.on("before_response_emit", (event) => ({
      allContent: event.allContent.map((text) => text.replace(/[\\w.+-]+@[\\w-]+(\\.[\\w-]+)+/g, "[email]")),
    }));
  },
};

export default plugin;
`;

/**
 * Claude Code's settings file: a `permissions` block (docs/permissions.md) — tests and read-only
 * git commands run without asking, pushes ask, secret files are never read — and the
 * example hook.
 */
const SETTINGS = {
  permissions: {
    allow: ["Bash(npm test:*)", "Bash(npm run test:*)", "Bash(git status)", "Bash(git diff:*)", "Bash(git log:*)"],
    ask: ["Bash(git push:*)"],
    deny: ["Read(./.env)", "Read(./.env.*)", "Read(./secrets/**)"],
  },
  hooks: {
    PreToolUse: [
      {
        matcher: "Bash",
        hooks: [{ type: "command", command: '"$CLAUDE_PROJECT_DIR"/hooks/example-hook.sh' }],
      },
    ],
  },
};

const HOOK = `#!/bin/sh
# An example command hook in Claude Code's format (PreToolUse, matcher Bash); Gatehouse runs it
# unchanged. stdin is the event as JSON: {"tool_name":"Bash","tool_input":{"command":"…"},…}.
# Exit 2 blocks the call and stderr is the reason the model sees; exit 0 lets it run.
input=$(cat)
case "$input" in
  *'rm -rf'*)
    echo "rm -rf is not allowed in this project" >&2
    exit 2
    ;;
esac
exit 0
`;

/** The files `init` writes, relative to the project folder, with their content and mode. */
export const INIT_FILES: readonly { readonly path: string; readonly content: string; readonly mode: number }[] = [
  { path: "gatehouse.json", content: `${JSON.stringify(CONFIG, null, 2)}\n`, mode: 0o644 },
  { path: "plugins/example.ts", content: PLUGIN, mode: 0o644 },
  { path: ".claude/settings.json", content: `${JSON.stringify(SETTINGS, null, 2)}\n`, mode: 0o644 },
  { path: "hooks/example-hook.sh", content: HOOK, mode: 0o755 },
];

const NEXT_STEPS = `
Try it (offline: the scripted model echoes your prompt):
  npx gatehouse run -p "hello, I am ada@example.com"     # the plugin redacts the address
  npx gatehouse run -p "what is the admin password?"     # the plugin blocks the turn (exit 3)
  npx gatehouse plugins inspect                          # what the plugin registered
  npx gatehouse config                                   # the configuration a run uses
`;

/** Adds `gatehouse init` to the program. */
export function registerInitCommand(program: Command, host: CommandHost = PROCESS_HOST): void {
  program
    .command("init")
    .summary("write a starter gatehouse.json, example plugin and example command hook")
    .description(
      `Write a starter project: gatehouse.json (with $schema, and $comment notes since JSON has no comments), plugins/example.ts, .claude/settings.json and hooks/example-hook.sh (executable); .gatehouse/ (sessions and input history, in clear text) is added to .gitignore. Nothing is overwritten: if any of these files exists, nothing is written.`,
    )
    .argument("[dir]", "the project folder (default: the current folder; created if missing)")
    .addHelpText("after", exitHelp({ failed: "a file could not be written", usage: "a file that already exists" }))
    .action(async (dir: string | undefined) => {
      host.exit(await initCommand(dir, host.io()));
    });
}

/** `gatehouse init [DIR]`. */
export async function initCommand(dir: string | undefined, io: CommandIO): Promise<ExitCode> {
  const { createCliLogger, writeOut } = await import("./output.js");
  const log = createCliLogger(io.stderr, io.env);
  const root = resolve(io.cwd, dir ?? ".");
  const existing: string[] = [];
  for (const file of INIT_FILES) if (await exists(join(root, file.path))) existing.push(file.path);
  if (existing.length > 0) {
    log.error(`not overwriting ${existing.join(", ")}; nothing was written`);
    return EXIT.usage;
  }
  const written: string[] = [];
  try {
    for (const file of INIT_FILES) {
      const target = join(root, file.path);
      await mkdir(dirname(target), { recursive: true });
      // "wx": a file that appeared since the check is not overwritten either.
      await writeFile(target, file.content, { flag: "wx", mode: file.mode });
      written.push(target);
    }
  } catch (error) {
    for (const target of written) await unlink(target).catch(() => undefined);
    const code = (error as NodeJS.ErrnoException).code;
    log.error(`cannot write the starter files (${code ?? String(error)}); nothing was kept`);
    return code === "EEXIST" ? EXIT.usage : EXIT.failed;
  }
  const ignored = await ignoreDataFolder(root).catch((error: NodeJS.ErrnoException) => {
    log.warn(`.gitignore: could not add .gatehouse/ (${error.code ?? String(error)}); add it yourself`);
    return undefined;
  });
  const trusted = await trustStarterFiles(root, io).catch((error: Error) => {
    log.warn(`the starter files are not trusted (${error.message}); run \`gatehouse trust\` in ${root}`);
    return undefined;
  });
  const where = dir === undefined ? "" : ` in ${dir}`;
  const created =
    INIT_FILES.map((f) => `  ${f.path}\n`).join("") +
    (ignored === undefined ? "" : `  .gitignore (${ignored})\n`) +
    (trusted === undefined ? "" : `  trusted: recorded in ${trusted}\n`);
  const cd = dir === undefined ? "" : `\nFirst: cd ${dir}`;
  await writeOut(io.stdout, `Created${where}:\n${created}${cd}${NEXT_STEPS}`);
  return EXIT.ok;
}

/**
 * The user just wrote these files with `init`: they are trusted (docs/trust.md), so the example
 * plugin loads. Returns the trust file written, or undefined when nothing needed trust.
 */
async function trustStarterFiles(root: string, io: Pick<CommandIO, "env">): Promise<string | undefined> {
  const [{ projectTrust }, { recordTrust, TRUST_ENV }] = await Promise.all([
    import("./project.js"),
    import("../config/trust.js"),
  ]);
  const { [TRUST_ENV]: _, ...env } = io.env;
  const trust = projectTrust({}, { cwd: root, env }, join(root, "gatehouse.json"));
  return trust.trusted ? undefined : recordTrust(trust);
}

/** The data folder holds conversations and input history in clear text: never committed. */
const IGNORE_ENTRY = ".gatehouse/";
const IGNORES_IT = /^\/?\.gatehouse\/?\s*$/m;

/**
 * Makes sure the project's .gitignore ignores `.gatehouse/`: created, or the entry appended to
 * what is there (nothing in it is changed). Says what it did, or undefined when it was there already.
 */
async function ignoreDataFolder(root: string): Promise<string | undefined> {
  const file = join(root, ".gitignore");
  let text: string | undefined;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  if (text !== undefined && IGNORES_IT.test(text)) return undefined;
  const entry = `# Gatehouse's data folder: sessions and input history, in clear text\n${IGNORE_ENTRY}\n`;
  if (text === undefined) {
    await writeFile(file, entry, { flag: "wx", mode: 0o644 });
    return `written, ignoring ${IGNORE_ENTRY}`;
  }
  await appendFile(file, `${text === "" || text.endsWith("\n") ? "" : "\n"}${entry}`);
  return `${IGNORE_ENTRY} added`;
}

async function exists(file: string): Promise<boolean> {
  try {
    await access(file, constants.F_OK);
    return true;
  } catch {
    return false;
  }
}
