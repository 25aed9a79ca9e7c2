import { maskSecrets } from "../../core/secrets.js";
import type { ApprovalRequest } from "../../runtime/types.js";
import { type InputField, toolInputFields } from "../../tools/input-view.js";

/**
 * What the console shows with an approval ask — what the terminal shows with it: the hook's
 * description, the tool's input field by field, the ask rule that applies, and the exact rules
 * "Allow always" adds (none: "always" is not offered, as on the terminal). Secrets masked.
 */
export interface ApprovalDetail {
  readonly description: string | null;
  readonly input: InputField[];
  readonly rule: string | null;
  readonly always: string[];
}

/** The detail of an ask, as the records keep it (JSON) while it waits. */
export function approvalDetail(request: ApprovalRequest): string {
  const detail: ApprovalDetail = {
    description: request.description === undefined ? null : maskSecrets(request.description),
    input: toolInputFields(request.params),
    rule: request.rule === undefined ? null : maskSecrets(request.rule),
    always: (request.suggestions ?? []).map(maskSecrets),
  };
  return JSON.stringify(detail);
}

const NONE: ApprovalDetail = { description: null, input: [], rule: null, always: [] };

/** The kept detail; an ask an older instance left without one shows none (and offers no "always"). */
export function readApprovalDetail(text: string | null | undefined): ApprovalDetail {
  if (!text) return NONE;
  try {
    return { ...NONE, ...(JSON.parse(text) as Partial<ApprovalDetail>) };
  } catch {
    return NONE;
  }
}
