import { DEFAULT_ENV_POLICY, type Env, type EnvPolicy } from "../core/env-policy.js";

/**
 * The environment a hook process gets: the runtime's, with what the environment policy removes
 * removed (a repository's hook has no business holding the user's API keys), plus the variables
 * Claude Code hooks expect.
 */
export interface HookEnvOptions {
  projectDir: string;
  sessionId: string;
  /** Base environment (default: process.env). */
  env?: Env;
  /** What of `env` hooks may see (default: provider keys and Gatehouse's secrets removed). */
  envPolicy?: EnvPolicy;
}

export function hookEnv(opts: HookEnvOptions): Record<string, string> {
  return {
    ...(opts.envPolicy ?? DEFAULT_ENV_POLICY).environment(opts.env ?? process.env, "commandHooks"),
    CLAUDE_PROJECT_DIR: opts.projectDir,
    GATEHOUSE_PROJECT_DIR: opts.projectDir,
    CLAUDE_CODE_SESSION_ID: opts.sessionId,
  };
}
