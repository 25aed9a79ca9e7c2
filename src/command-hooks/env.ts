/**
 * The environment a hook process gets: the runtime's own, minus model-provider credentials
 * (a repository's hook has no business holding the user's API keys), plus the variables
 * Claude Code hooks expect.
 */

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
 * The rule: any `*_API_KEY` (or `*_API_KEYS`), every `AWS_*`, `GOOGLE_APPLICATION_CREDENTIALS`, and
 * any variable of a known model provider whose name mentions a key, token, secret or credential.
 * Case-insensitive, since a lowercase `openai_api_key` works for some SDKs too.
 */
export function isProviderCredential(name: string): boolean {
  const n = name.toUpperCase();
  return /_API_KEYS?$/.test(n) || n.startsWith("AWS_") || PROVIDER_SECRET.test(n);
}

export function scrubEnv(
  env: Readonly<Record<string, string | undefined>>,
  passEnv: readonly string[] = [],
): Record<string, string> {
  const keep = new Set(passEnv);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) continue;
    if (isProviderCredential(k) && !keep.has(k)) continue;
    out[k] = v;
  }
  return out;
}

export interface HookEnvOptions {
  projectDir: string;
  sessionId: string;
  /** Base environment (default: process.env). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Credential names to keep (`commandHooks.passEnv`). */
  passEnv?: readonly string[];
}

export function hookEnv(opts: HookEnvOptions): Record<string, string> {
  return {
    ...scrubEnv(opts.env ?? process.env, opts.passEnv),
    CLAUDE_PROJECT_DIR: opts.projectDir,
    GATEHOUSE_PROJECT_DIR: opts.projectDir,
    CLAUDE_CODE_SESSION_ID: opts.sessionId,
  };
}
