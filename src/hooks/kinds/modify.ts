import { type Invocation, invoke } from "../invoke.js";
import { Merger } from "../merge.js";
import type { Attribution } from "../types.js";
import { attribution, type Dispatch, errorDetail, validateResult } from "./shared.js";

export interface ModifyDispatchOutcome {
  readonly result: Record<string, unknown>;
  readonly decidedBy?: Attribution;
}

/**
 * Sequential, in priority order; each result validated and merged by rule. A latch (a block
 * decision, or a failure under fail-closed) stops the remaining handlers.
 */
export async function dispatchModify(d: Dispatch): Promise<ModifyDispatchOutcome> {
  const { spec, registrations, failures } = d;
  const merger = new Merger(spec.rules ?? {});
  const matchValue = spec.matcher === undefined ? undefined : String(d.event[spec.matcher]);
  let current = d.event;
  for (const registration of registrations) {
    if (registration.matches !== undefined && !registration.matches(matchValue as string)) continue;
    let invocation: Invocation | Promise<Invocation> = invoke(registration, current, d.run);
    if (invocation instanceof Promise) invocation = await invocation;
    let cause: Attribution["cause"] | undefined;
    let detail = "";
    if (invocation.status === "ok") {
      if (invocation.value === undefined) continue;
      const validated = validateResult(spec, invocation.value, current);
      if (validated.ok) {
        const step = merger.apply(validated.value);
        if (step.chained) current = Object.freeze({ ...current, ...step.chained });
        if (step.latched) return { result: merger.merged, decidedBy: attribution(registration, "decision") };
        continue;
      }
      cause = "invalid";
      detail = validated.detail;
    } else {
      cause = invocation.status;
      if (invocation.status === "threw") detail = errorDetail(invocation.error);
    }
    const closed = registration.failure === "closed" && spec.blockField !== undefined;
    failures.report(registration, cause, detail, closed);
    if (closed) {
      merger.merged[spec.blockField as string] = true;
      return { result: merger.merged, decidedBy: attribution(registration, cause) };
    }
  }
  return { result: merger.merged };
}
