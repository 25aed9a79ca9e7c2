import { categorySlug } from "../../core/identifiers.js";
import { GateResultSchema } from "../catalog.js";
import type { Status } from "../invoke.js";
import { readResult, UnreadableResult } from "../plain-data.js";
import type { Registration } from "../registry.js";
import type { GateOutcome } from "../types.js";
import { CONTINUE, Sequence } from "./sequence.js";
import { attribution, type Dispatch, errorDetail, issueDetail } from "./shared.js";

const PASS: GateOutcome = Object.freeze({ outcome: "pass" });

/**
 * Sequential; a result must be exactly `{outcome:"pass"}` or `{outcome:"block", reason, …}`.
 * `undefined` is no opinion; anything else, a throw or a timeout blocks (fail closed). The
 * block's internal `reason` is read by nobody and dropped here.
 */
export function dispatchGate(d: Dispatch): Promise<GateOutcome> {
  return new Gate(d).run();
}

class Gate extends Sequence<GateOutcome> {
  protected step(registration: Registration, status: Status, value: unknown): GateOutcome | typeof CONTINUE {
    const { failures } = this.d;
    if (status === "ok") {
      if (value === undefined) return CONTINUE;
      const data = readResult(value);
      const parsed = data instanceof UnreadableResult ? undefined : GateResultSchema.safeParse(data);
      if (parsed?.success) {
        const decision = parsed.data;
        if (decision.outcome === "pass") return CONTINUE;
        const category = categorySlug(decision.category);
        return {
          outcome: "block",
          by: attribution(registration, "decision"),
          ...(decision.message === undefined ? {} : { message: decision.message }),
          // Any text a plugin gave, as the store keeps it: a category it cannot spell never costs the block.
          ...(category === undefined ? {} : { category }),
        };
      }
      const closed = registration.failure === "closed";
      const detail = parsed ? issueDetail(parsed.error.issues) : (data as UnreadableResult).why;
      failures.report(registration, "invalid", detail, closed);
      return closed ? { outcome: "block", by: attribution(registration, "invalid") } : CONTINUE;
    }
    const closed = registration.failure === "closed";
    const cause = status as "threw" | "timeout";
    failures.report(registration, cause, cause === "threw" ? errorDetail(value) : "", closed);
    return closed ? { outcome: "block", by: attribution(registration, cause) } : CONTINUE;
  }

  protected end(): GateOutcome {
    return PASS;
  }

  protected cancelled(registration: Registration): GateOutcome {
    return { outcome: "block", by: attribution(registration, "cancelled") };
  }
}
