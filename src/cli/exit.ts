/** Exit statuses of `gatehouse` commands. Kept free of imports: `--help` and `--version` load it. */
export const EXIT = {
  /** The turn completed, or a plugin answered it. */
  ok: 0,
  /** The run failed, was cancelled or reached its step limit (max_steps). */
  failed: 1,
  /** Bad input or configuration: a bad flag, gatehouse.json, model spec or scripted file, no model, a missing API key, no prompt. */
  usage: 2,
  /** A policy hook blocked the turn. */
  blocked: 3,
  /** A second Ctrl-C: the process stopped at once instead of waiting for the cancelled work (128 + SIGINT). */
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export const EXIT_CODES_HELP = `
Exit status:
    0  the turn completed (or a plugin answered it)
    1  the run failed, was cancelled (the first Ctrl-C cancels it cleanly) or reached
       its step limit (outcome max_steps; --max-turns)
    2  bad input or configuration: a bad flag, gatehouse.json, model spec or scripted
       file, no model configured, a missing API key, an empty prompt, a plugin that
       cannot be loaded
    3  a policy hook blocked the turn (its notice is printed as the reply)
  130  a second Ctrl-C: gatehouse stopped at once, without waiting for the cancelled
       run to wind down; every process it started was killed first

SIGTERM and SIGHUP (the terminal closed) cancel the run like Ctrl-C; once it is recorded,
gatehouse ends by that signal (a shell shows 143 or 129). A second signal stops at once.`;

/** `gatehouse --help`: what the statuses mean across commands; each command's --help has its own list. */
export const PROGRAM_EXIT_CODES_HELP = `
Exit status (each command's --help says exactly when):
    0  done: the turn completed or a plugin answered it; the command did what it was asked
    1  a failure: the run failed or was cancelled, an id that does not exist, a store error
    2  bad input or configuration: a bad flag or argument, gatehouse.json, model spec, a plugin
       that cannot be loaded, a file gatehouse init will not overwrite
    3  a policy hook blocked the turn (its notice is printed as the reply)
  130  run and chat: a second Ctrl-C stopped gatehouse at once, without waiting for the
       cancelled work to wind down (every process it started was killed first)
SIGTERM and SIGHUP cancel a run or chat turn like Ctrl-C; once it is recorded, gatehouse
ends by that signal (a shell shows 143 or 129).`;

export const ENVIRONMENT_HELP = `
Environment:
  GATEHOUSE_MODEL         model spec; --model wins over it, it wins over gatehouse.json "model"
  GATEHOUSE_CONFIG        config file to use instead of ./gatehouse.json (--config wins)
  GATEHOUSE_DATA_DIR      data folder instead of ./.gatehouse (--data-dir wins)
  GATEHOUSE_DATABASE_URL  store (postgres://…, memory, or a file); wins over gatehouse.json "store"
  GATEHOUSE_HOST, GATEHOUSE_PORT  where serve listens; --host/--port win, gatehouse.json "server" loses
  GATEHOUSE_LOG_LEVEL     debug, info, warn (default) or error; logs go to stderr (debug: model
                          calls, tool calls, hook decisions, metadata only)
  GATEHOUSE_LOG_FORMAT    json: log lines as JSON (pino) instead of "gatehouse: ..." lines
  GATEHOUSE_CONSOLE_ASSETS  serve and console: a web console built from source, served instead
  GATEHOUSE_TRUST_WORKSPACE  1: trust the project's settings for this process, as \`gatehouse
                          trust --yes\` does for good (docs/trust.md); never passed to tools
  MCP_TIMEOUT             how long an MCP server has to start and answer, in ms (default 30000)
  NO_COLOR                no colors (they are used only on a terminal)`;
