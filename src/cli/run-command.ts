// `gatehouse run`'s command line: its flags and help, without what it does (main.ts gives the
// action; the tests give one that runs it in their own process). Light: commander only.
import { type Command, Option } from "commander";
import { ENVIRONMENT_HELP, EXIT_CODES_HELP } from "./exit.js";

export function defineRunCommand(program: Command): Command {
  const run = program
    .command("run")
    .summary("run one turn and print the reply")
    .description(
      'Run one turn and print the reply. The prompt comes from -p or, without it, from all of stdin.\nData is kept in ./.gatehouse unless --data-dir (or gatehouse.json "store") says otherwise.',
    )
    .option("-p, --prompt <prompt>", "the prompt (default: read stdin to the end)")
    .option("--session <id>", "continue this session, or start one with this id (default: a new session)")
    .option("-c, --continue", "continue the most recent session of this project")
    .option("-r, --resume <id>", "continue this session (it must exist)");
  return projectOptions(run)
    .option(
      "--max-turns <n>",
      'model calls at most; past it the run ends as max_steps (gatehouse.json "maxSteps", default 25)',
    )
    .addOption(
      new Option("--trigger <trigger>", "what started the run").choices(["user", "cron", "api"]).default("user"),
    )
    .option("--job-id <id>", "the job this run belongs to (for cron and api triggers)")
    .addOption(
      new Option(
        "--output-format <format>",
        "text: the reply; json: claude -p's result object, as one line; stream-json: claude -p's messages (system, assistant, user, result), one a line; gatehouse-events: every run event, one a line",
      ).choices(["text", "json", "stream-json", "gatehouse-events"]),
    )
    .option("--json", "the same as --output-format json")
    .option("--verbose", "log model calls, tool calls and hook decisions to stderr (metadata, never content)")
    .addHelpText("after", `${EXIT_CODES_HELP}\n${ENVIRONMENT_HELP}`);
}

/** The options `run` and `chat` share: which model, config, store, settings and system prompt. */
export function projectOptions(command: Command): Command {
  return command
    .option("-m, --model <spec>", 'model spec, e.g. openai:gpt-4o or scripted:echo (overrides gatehouse.json "model")')
    .option("--config <file>", "config file (default: ./gatehouse.json, if present)")
    .option("--data-dir <dir>", "data folder for the default SQLite store (default: ./.gatehouse)")
    .option("--settings <file|json>", "command hooks settings (a file, or inline JSON), read after gatehouse.json's")
    .option("--system-prompt <text>", 'the system prompt, instead of gatehouse.json "systemPrompt"')
    .option("--append-system-prompt <text>", "text added after the system prompt");
}
