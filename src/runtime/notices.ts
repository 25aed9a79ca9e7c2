/**
 * Every text Gatehouse itself shows when something was blocked. They name the plugin (so the
 * user knows whom to ask) and never carry a hook's internal reason.
 */
export const notices = {
  promptBlocked: (pluginId: string) => `Your message was blocked by a policy (${pluginId}).`,
  responseBlocked: (pluginId: string) => `The response was blocked by a policy (${pluginId}).`,
  notDelivered: (pluginId: string) => `The response was not delivered: a policy (${pluginId}) held it back.`,
  toolBlocked: (toolName: string, pluginId: string, reason?: string) =>
    `The ${toolName} call was blocked by a policy (${pluginId})${reason ? `: ${reason}` : "."}`,
  toolWithheld: (toolName: string, pluginId: string, reason?: string) =>
    `[The output of this ${toolName} call was withheld by a policy (${pluginId})${reason ? `: ${reason}` : ""}. The tool did run.]`,
  subagentWithheld: "[This sub-agent's work was withheld by a policy of the agent that started it.]",
  runStopped: (pluginId: string) => `The run was stopped by a policy (${pluginId}).`,
  notRunAfterStop: (toolName: string) => `The ${toolName} call did not run: the run was stopped by a policy.`,
  approvalDenied: (toolName: string) => `The ${toolName} call was not approved.`,
  permissionDenied: (toolName: string, why: string) => `Permission to use ${toolName} was denied (${why}).`,
  // Claude Code's words for a call a deny rule refused. Never the call's input (a refused call's input
  // is kept nowhere): Claude Code's form naming the rule's content, or its fixed text for Read.
  readDenied: "<tool_use_error>File is in a directory that is denied by your permission settings.</tool_use_error>",
  ruleDenied: (toolName: string, ruleContent?: string) =>
    `Permission to use ${toolName}${ruleContent ? ` with ${ruleContent}` : ""} has been denied.`,
  permissionRetry: "A hook says you may try this call again (differently, or once the user has changed the rules).",
  permissionInterrupted: (toolName: string, pluginId: string) =>
    `The run was stopped: permission to use ${toolName} was denied by a policy (${pluginId}).`,
  toolNotAllowed: (toolName: string) => `The tool ${toolName} is not available in this run.`,
  unknownTool: (toolName: string) => `There is no tool named ${toolName}.`,
  cancelledUnchecked: "The run was cancelled before its output was checked; the unchecked output was removed.",
  failedUnchecked: "The run failed before its output was checked; the unchecked output was removed.",
  resultNotStored: "[This tool result was not stored by policy.]",
  summaryNotStored: (count: number) =>
    `[A summary of ${count} earlier messages was not stored by policy; they are no longer in the context.]`,
  interrupted: "The previous run stopped before it finished (its process ended); its unchecked output was removed.",
} as const;
