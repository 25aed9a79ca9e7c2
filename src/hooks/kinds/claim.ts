import { type Invocation, invoke } from "../invoke.js";
import type { Attribution } from "../types.js";
import { attribution, type Dispatch, errorDetail, validateResult } from "./shared.js";

export type ClaimDispatchOutcome =
  | { readonly handled: false }
  | { readonly handled: true; readonly by: Attribution; readonly result: Record<string, unknown> };

const DECLINED: ClaimDispatchOutcome = Object.freeze({ handled: false });

/** Sequential; the first `handled: true` wins and later handlers are not called. Failures fall through. */
export async function dispatchClaim(d: Dispatch): Promise<ClaimDispatchOutcome> {
  for (const registration of d.registrations) {
    let invocation: Invocation | Promise<Invocation> = invoke(registration, d.event, d.run);
    if (invocation instanceof Promise) invocation = await invocation;
    if (invocation.status !== "ok") {
      d.failures.report(
        registration,
        invocation.status,
        invocation.status === "threw" ? errorDetail(invocation.error) : "",
        false,
      );
      continue;
    }
    if (invocation.value === undefined) continue;
    const validated = validateResult(d.spec, invocation.value, d.event);
    if (!validated.ok) {
      d.failures.report(registration, "invalid", validated.detail, false);
      continue;
    }
    if (validated.value.handled === true)
      return { handled: true, by: attribution(registration, "decision"), result: validated.value };
  }
  return DECLINED;
}
