import { DEFAULT_ENV_POLICY, type Env, type EnvPolicy } from "../core/env-policy.js";
import type { HttpHandlerDef } from "./settings.js";

/** `$VAR` or `${VAR}` in a header value. */
const HEADER_VARIABLE = /\$\{(\w+)\}|\$(\w+)/g;

/** The variables a header value names, in order. */
export function headerVariables(value: string): string[] {
  return [...value.matchAll(HEADER_VARIABLE)].map((m) => (m[1] ?? m[2]) as string);
}

/**
 * `$VAR` / `${VAR}` in header values resolve only for names that are both in the handler's
 * `allowedEnvVars` and allowed by the environment policy; any other name becomes empty, so a
 * repository's hook can neither read arbitrary variables into a request nor send a provider key
 * the operator did not pass with `commandHooks.passEnv`.
 */
export function expandHeaders(
  def: HttpHandlerDef,
  env: Env,
  policy: EnvPolicy = DEFAULT_ENV_POLICY,
): Record<string, string> {
  const allowed = new Set(def.allowedEnvVars ?? []);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(def.headers ?? {})) {
    out[k] = v.replace(HEADER_VARIABLE, (_m, a?: string, b?: string) => {
      const name = (a ?? b) as string;
      return allowed.has(name) && policy.allows(name, "httpHeaders") ? (env[name] ?? "") : "";
    });
  }
  return out;
}
