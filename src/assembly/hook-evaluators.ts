import type { PermissionPolicy } from "../permissions/index.js";
import { hookAgentCall, hookModelCall } from "../runtime/hook-model.js";
import { modelResolver } from "../runtime/model-resolver.js";
import type { SandboxPolicy } from "../sandbox/policy.js";

/**
 * What evaluates `prompt` and `agent` command hooks where no Gatehouse runs (`gatehouse hooks
 * test`): the project's model, permission rules and sandbox read rules, making the calls a run's hooks make. Their
 * usage counts nowhere, since there is no run.
 */
export function hookEvaluators(
  model: string,
  permissions: PermissionPolicy,
  sandboxReads: SandboxPolicy["filesystem"],
  cwd: string,
  env: Readonly<Record<string, string | undefined>>,
) {
  const models = modelResolver(model, cwd, env as NodeJS.ProcessEnv);
  return {
    evaluatePrompt: hookModelCall(models),
    evaluateAgent: hookAgentCall(models, permissions, cwd, sandboxReads),
  };
}
