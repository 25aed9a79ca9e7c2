import { HOOKS, type HookName, isHookName } from "../hooks/catalog.js";
import type { Diagnostic, RegistrationRequest } from "../hooks/registry.js";
import type { PluginHookOptions } from "./config.js";

/**
 * Conversation hooks (★) see or steer the whole conversation, so a plugin that is not
 * trusted must be granted them explicitly; prompt-injection hooks can be refused to anyone.
 * A refusal is loud (a diagnostic) and affects only that registration.
 */
export function applyPermissions(
  pluginId: string,
  trusted: boolean,
  grants: PluginHookOptions,
  requests: readonly RegistrationRequest[],
): { accepted: RegistrationRequest[]; refused: Diagnostic[] } {
  const accepted: RegistrationRequest[] = [];
  const refused: Diagnostic[] = [];
  const conversationAllowed = trusted
    ? grants.allowConversationAccess !== false
    : grants.allowConversationAccess === true;
  for (const request of requests) {
    const reason = isHookName(request.hook) ? refusal(request.hook, conversationAllowed, grants) : undefined;
    if (reason) refused.push({ level: "warning", pluginId, hook: request.hook, code: "refused", message: reason });
    else accepted.push(request);
  }
  return { accepted, refused };
}

function refusal(hook: HookName, conversationAllowed: boolean, grants: PluginHookOptions): string | undefined {
  const { access } = HOOKS[hook];
  if (access.promptInjection && grants.allowPromptInjection === false)
    return `"${hook}" injects into the prompt and this plugin has hooks.allowPromptInjection: false`;
  if (access.conversation && !conversationAllowed)
    return `"${hook}" reads the conversation; grant it with hooks.allowConversationAccess: true in this plugin's gatehouse.json entry`;
  return undefined;
}
