/**
 * The environment of every process Gatehouse starts on the model's or a hook's behalf: the Bash
 * tool, command hooks, MCP stdio servers, and the variables an `http` hook may put in its
 * headers. One rule for all of them, so no surface is the way around another:
 *
 * - removed: model-provider credentials, Gatehouse's own variables (its database URL and keys;
 *   all but a few harmless settings), and whatever the operator's deny list names;
 * - added back, per consumer, only by an explicit allow list: `tools.bash.passEnv`,
 *   `commandHooks.passEnv` (command and `http` hooks), and an MCP server's own `env`.
 *
 * An MCP server also inherits only a minimal set of variables (PATH, HOME, …), as the MCP SDK
 * does: a third-party server gets what its `env` gives it. The policy is a value, built from
 * configuration and handed to each consumer, never read from a global.
 */

/** Who gets the environment. `httpHeaders` is `$VAR` expansion in an `http` hook's headers. */
export type EnvConsumer = "bash" | "commandHooks" | "httpHeaders" | "mcp";
export const ENV_CONSUMERS: readonly EnvConsumer[] = ["bash", "commandHooks", "httpHeaders", "mcp"];

/** Why a variable is removed. */
export type RemovedClass = "provider-credential" | "gatehouse" | "denied" | "not-inherited";

export type Env = Readonly<Record<string, string | undefined>>;

export interface EnvPolicyOptions {
  /** Further variables to remove for every consumer: names, or patterns with `*` (`STRIPE_*`). */
  readonly deny?: readonly string[];
  /**
   * Per consumer, variables to keep although a rule above removes them (names or `*` patterns).
   * `httpHeaders` uses the `commandHooks` list (`http` hooks are command hooks); an MCP server's
   * allow list is its own `env`, which the server's entry sets.
   */
  readonly passEnv?: { readonly bash?: readonly string[]; readonly commandHooks?: readonly string[] };
}

export interface EnvPolicy {
  /** Why `name` is kept from `consumer`, or undefined when it may have it. */
  removal(name: string, consumer: EnvConsumer): RemovedClass | undefined;
  allows(name: string, consumer: EnvConsumer): boolean;
  /** `base` with every variable `consumer` may not have removed (undefined values dropped too). */
  environment(base: Env, consumer: EnvConsumer): Record<string, string>;
  /** A policy with these lists added to this one's. */
  extend(options: EnvPolicyOptions): EnvPolicy;
  readonly options: EnvPolicyOptions;
}

const PROVIDER_PREFIXES = [
  "ANTHROPIC",
  "CLAUDE_CODE_OAUTH",
  "OPENAI",
  "AZURE",
  "GOOGLE",
  "GEMINI",
  "VERTEX",
  "MISTRAL",
  "GROQ",
  "COHERE",
  "DEEPSEEK",
  "XAI",
  "TOGETHER",
  "FIREWORKS",
  "OPENROUTER",
  "PERPLEXITY",
  "HF",
  "HUGGINGFACE",
  "HUGGING_FACE",
  "REPLICATE",
  "BEDROCK",
  "CEREBRAS",
  "NVIDIA",
  "VOYAGE",
];
const PROVIDER_SECRET = new RegExp(`^(?:${PROVIDER_PREFIXES.join("|")})_\\w*(?:KEY|TOKEN|SECRET|CREDENTIALS?)\\w*$`);

/**
 * Model-provider credentials: any `*_API_KEY` (or `*_API_KEYS`), every `AWS_*`,
 * `GOOGLE_APPLICATION_CREDENTIALS`, and any variable of a known provider whose name mentions a
 * key, token, secret or credential. Case-insensitive: a lowercase `openai_api_key` works for
 * some SDKs too.
 */
export function isProviderCredential(name: string): boolean {
  const n = name.toUpperCase();
  return /_API_KEYS?$/.test(n) || n.startsWith("AWS_") || PROVIDER_SECRET.test(n);
}

/**
 * Gatehouse's variables that hold no secret. Every other `GATEHOUSE_*` is removed: the database
 * URL carries a password, the model spec may carry one in its base URL, and a variable added
 * later is a secret until it is listed here.
 */
const HARMLESS_GATEHOUSE = new Set([
  "GATEHOUSE_CONFIG",
  "GATEHOUSE_DATA_DIR",
  "GATEHOUSE_LOG_LEVEL",
  "GATEHOUSE_PROJECT_DIR",
]);

export function isGatehouseSecret(name: string): boolean {
  const n = name.toUpperCase();
  return n.startsWith("GATEHOUSE_") && !HARMLESS_GATEHOUSE.has(n);
}

/** What an MCP stdio server inherits (the MCP SDK's list, taken from sudo's). */
export const MCP_INHERITED: readonly string[] = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];
const MCP_INHERITED_SET = new Set(MCP_INHERITED);

/** `NAME` or `PREFIX_*`-style patterns (a `*` matches any run of characters); case-sensitive, as variables are. */
function nameMatcher(patterns: readonly string[]): (name: string) => boolean {
  const exact = new Set(patterns.filter((p) => !p.includes("*")));
  const globs = patterns
    .filter((p) => p.includes("*"))
    .map((p) => new RegExp(`^${p.split("*").map(escapeRegExp).join(".*")}$`));
  return (name) => exact.has(name) || globs.some((g) => g.test(name));
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

export function createEnvPolicy(options: EnvPolicyOptions = {}): EnvPolicy {
  const denied = nameMatcher(options.deny ?? []);
  const passed: Record<EnvConsumer, (name: string) => boolean> = {
    bash: nameMatcher(options.passEnv?.bash ?? []),
    commandHooks: nameMatcher(options.passEnv?.commandHooks ?? []),
    httpHeaders: nameMatcher(options.passEnv?.commandHooks ?? []),
    mcp: () => false,
  };
  const removal = (name: string, consumer: EnvConsumer): RemovedClass | undefined => {
    const why: RemovedClass | undefined = isProviderCredential(name)
      ? "provider-credential"
      : isGatehouseSecret(name)
        ? "gatehouse"
        : denied(name)
          ? "denied"
          : consumer === "mcp" && !MCP_INHERITED_SET.has(name)
            ? "not-inherited"
            : undefined;
    return why === undefined || passed[consumer](name) ? undefined : why;
  };
  const policy: EnvPolicy = {
    options,
    removal,
    allows: (name, consumer) => removal(name, consumer) === undefined,
    environment(base, consumer) {
      const out: Record<string, string> = {};
      for (const [name, value] of Object.entries(base)) {
        if (value === undefined || removal(name, consumer) !== undefined) continue;
        // A bash function exported into the environment (`BASH_FUNC_x%%=() {…}`) runs in every shell.
        if (consumer === "mcp" && value.startsWith("()")) continue;
        out[name] = value;
      }
      return out;
    },
    extend(more) {
      const join = (a?: readonly string[], b?: readonly string[]) =>
        a === undefined && b === undefined ? undefined : [...(a ?? []), ...(b ?? [])];
      const bash = join(options.passEnv?.bash, more.passEnv?.bash);
      const commandHooks = join(options.passEnv?.commandHooks, more.passEnv?.commandHooks);
      const deny = join(options.deny, more.deny);
      return createEnvPolicy({
        ...(deny === undefined ? {} : { deny }),
        passEnv: { ...(bash === undefined ? {} : { bash }), ...(commandHooks === undefined ? {} : { commandHooks }) },
      });
    },
  };
  return policy;
}

/** The policy with no configuration: what a library caller who passes none gets. */
export const DEFAULT_ENV_POLICY: EnvPolicy = createEnvPolicy();

/** How a removal reads in a message (`hooks check`, docs). */
export function describeRemoval(why: RemovedClass): string {
  switch (why) {
    case "provider-credential":
      return "a model-provider credential";
    case "gatehouse":
      return "a Gatehouse variable that may hold a secret";
    case "denied":
      return "named in environment.deny";
    case "not-inherited":
      return "not inherited by MCP servers";
  }
}
