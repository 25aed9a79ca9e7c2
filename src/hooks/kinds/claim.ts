import type { Invocation } from "../invoke.js";
import type { Registration } from "../registry.js";
import type { Attribution } from "../types.js";
import { CONTINUE, Sequence } from "./sequence.js";
import { attribution, type Dispatch, errorDetail, validateResult } from "./shared.js";

export type ClaimDispatchOutcome =
  | { readonly handled: false }
  | { readonly handled: true; readonly by: Attribution; readonly result: Record<string, unknown> };

const DECLINED: ClaimDispatchOutcome = Object.freeze({ handled: false });

/** Sequential; the first `handled: true` wins and later handlers are not called. Failures fall through. */
export function dispatchClaim(d: Dispatch): Promise<ClaimDispatchOutcome> {
  return new Claim(d).run();
}

class Claim extends Sequence<ClaimDispatchOutcome> {
  protected step(registration: Registration, invocation: Invocation): ClaimDispatchOutcome | typeof CONTINUE {
    const { failures } = this.d;
    if (invocation.status !== "ok") {
      failures.report(
        registration,
        invocation.status,
        invocation.status === "threw" ? errorDetail(invocation.error) : "",
        false,
      );
      return CONTINUE;
    }
    if (invocation.value === undefined) return CONTINUE;
    const validated = validateResult(this.d.spec, invocation.value, this.d.event);
    if (!validated.ok) {
      failures.report(registration, "invalid", validated.detail, false);
      return CONTINUE;
    }
    if (validated.value.handled === true)
      return { handled: true, by: attribution(registration, "decision"), result: validated.value };
    return CONTINUE;
  }

  protected cancelled(): ClaimDispatchOutcome {
    return DECLINED;
  }

  protected end(): ClaimDispatchOutcome {
    return DECLINED;
  }
}
