import { GateResultSchema } from "../catalog.js";
import { type Invocation, invoke } from "../invoke.js";
import type { GateOutcome } from "../types.js";
import { attribution, type Dispatch, errorDetail, issueDetail } from "./shared.js";

const PASS: GateOutcome = Object.freeze({ outcome: "pass" });

/**
 * Sequential; a result must be exactly `{outcome:"pass"}` or `{outcome:"block", reason, …}`.
 * `undefined` is no opinion; anything else, a throw or a timeout blocks (fail closed). The
 * block's internal `reason` is read by nobody and dropped here.
 */
export async function dispatchGate(d: Dispatch): Promise<GateOutcome> {
  for (const registration of d.registrations) {
    let invocation: Invocation | Promise<Invocation> = invoke(registration, d.event, d.run);
    if (invocation instanceof Promise) invocation = await invocation;
    if (invocation.status === "ok") {
      if (invocation.value === undefined) continue;
      const parsed = GateResultSchema.safeParse(invocation.value);
      if (parsed.success) {
        const decision = parsed.data;
        if (decision.outcome === "pass") continue;
        return {
          outcome: "block",
          by: attribution(registration, "decision"),
          ...(decision.message === undefined ? {} : { message: decision.message }),
          ...(decision.category === undefined ? {} : { category: decision.category }),
        };
      }
      const closed = registration.failure === "closed";
      d.failures.report(registration, "invalid", issueDetail(parsed.error.issues), closed);
      if (closed) return { outcome: "block", by: attribution(registration, "invalid") };
      continue;
    }
    const closed = registration.failure === "closed";
    d.failures.report(
      registration,
      invocation.status,
      invocation.status === "threw" ? errorDetail(invocation.error) : "",
      closed,
    );
    if (closed) return { outcome: "block", by: attribution(registration, invocation.status) };
  }
  return PASS;
}
