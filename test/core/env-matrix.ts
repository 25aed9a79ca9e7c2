// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these tests spell the literal ${VAR} syntax of configs
// The environment policy's test matrix, consumer × variable class, written out literally so that
// both the unit test (test/core/env-policy.test.ts) and the CLI test (test/cli/environment.test.ts)
// check the same table against what really happens.
import type { EnvConsumer } from "../../src/core/env-policy.js";

/** The configuration both tests use: gatehouse.json's keys. */
export const MATRIX_CONFIG = {
  environment: { deny: ["STRIPE_*", "DEPLOY_TOKEN"] },
  tools: { bash: { passEnv: ["ANTHROPIC_API_KEY"] } },
  commandHooks: { passEnv: ["MISTRAL_API_KEY", "GATEHOUSE_DATABASE_URL"] },
} as const;

/** What an MCP server's entry sets in `env` (its allow list). */
export const MCP_ENV = { GEMINI_API_KEY: "${GEMINI_API_KEY}" } as const;

export interface MatrixRow {
  readonly variable: string;
  readonly class: string;
  /** Whether each consumer sees it. */
  readonly sees: Readonly<Record<EnvConsumer, boolean>>;
}

const row = (variable: string, cls: string, bash: boolean, hooks: boolean, http: boolean, mcp: boolean): MatrixRow => ({
  variable,
  class: cls,
  sees: { bash, commandHooks: hooks, httpHeaders: http, mcp },
});

export const MATRIX: readonly MatrixRow[] = [
  //   variable                       class                                bash   hooks  http   mcp
  row("APP_SETTING", "ordinary", true, true, true, false),
  row("PATH", "ordinary, inherited by MCP servers", true, true, true, true),
  row("OPENAI_API_KEY", "provider key", false, false, false, false),
  row("openai_api_key", "provider key, lowercase", false, false, false, false),
  row("AWS_SECRET_ACCESS_KEY", "cloud credential", false, false, false, false),
  row("HF_TOKEN", "provider token", false, false, false, false),
  row("ANTHROPIC_API_KEY", "provider key in tools.bash.passEnv", true, false, false, false),
  row("MISTRAL_API_KEY", "provider key in commandHooks.passEnv", false, true, true, false),
  row("GEMINI_API_KEY", "provider key in the MCP server's env", false, false, false, true),
  row("GATEHOUSE_DATABASE_URL", "Gatehouse secret in commandHooks.passEnv", false, true, true, false),
  row("GATEHOUSE_MODEL", "Gatehouse variable (may hold a URL password)", false, false, false, false),
  row("GATEHOUSE_API_KEYS", "Gatehouse secret", false, false, false, false),
  row("GATEHOUSE_LOG_LEVEL", "Gatehouse setting, harmless", true, true, true, false),
  row("STRIPE_SECRET_KEY", "denied by pattern", false, false, false, false),
  row("DEPLOY_TOKEN", "denied by name", false, false, false, false),
];

/** A value per variable that no test output holds by accident. */
export function canary(variable: string): string {
  return `canary-${variable.toLowerCase().replace(/_/g, "-")}-5e1f`;
}

/** The environment the matrix runs in: every variable with its canary (PATH stays real). */
export function matrixEnv(path: string): Record<string, string> {
  return Object.fromEntries(MATRIX.map((r) => [r.variable, r.variable === "PATH" ? path : canary(r.variable)]));
}
