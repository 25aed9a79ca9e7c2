import type { Status } from "../invoke.js";
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
  protected step(registration: Registration, status: Status, value: unknown): ClaimDispatchOutcome | typeof CONTINUE {
    const { failures } = this.d;
    if (status !== "ok") {
      const cause = status as "threw" | "timeout";
      failures.report(registration, cause, cause === "threw" ? errorDetail(value) : "", false);
      return CONTINUE;
    }
    if (value === undefined) return CONTINUE;
    const validated = validateResult(this.d, value, this.d.event);
    if (typeof validated === "string") {
      failures.report(registration, "invalid", validated, false);
      return CONTINUE;
    }
    if (validated.handled === true)
      return { handled: true, by: attribution(registration, "decision"), result: validated };
    return CONTINUE;
  }

  protected cancelled(): ClaimDispatchOutcome {
    return DECLINED;
  }

  protected end(): ClaimDispatchOutcome {
    return DECLINED;
  }
}
