import { HandlerContext } from "../invoke.js";
import { Merger } from "../merge.js";
import type { Attribution } from "../types.js";
import type { ModifyDispatchOutcome } from "./modify.js";
import { attribution, type Dispatch, errorDetail, validateResult } from "./shared.js";

/**
 * The persistence path runs synchronously, so handlers must answer synchronously: a returned
 * Promise is reported and its result ignored. Each handler sees the previous one's rewrite.
 */
export function dispatchSync(d: Dispatch): ModifyDispatchOutcome {
  const { spec, failures } = d;
  const merger = new Merger(spec.rules ?? {});
  let current = d.event;
  for (const registration of d.registrations) {
    let value: unknown;
    try {
      value = registration.handler(current, new HandlerContext(d.run, registration.hook, registration.pluginId));
    } catch (error) {
      failures.report(registration, "threw", errorDetail(error), false);
      continue;
    }
    if (value === undefined) continue;
    if (value instanceof Promise) {
      value.catch(() => {});
      failures.misuse(
        registration,
        "returned a Promise; a sync hook's handler must answer synchronously, so its result is ignored",
      );
      continue;
    }
    const validated = validateResult(d, value, current);
    if (typeof validated === "string") {
      failures.report(registration, "invalid", validated, false);
      continue;
    }
    const latched = merger.apply(validated);
    if (merger.chained) current = Object.freeze({ ...current, ...merger.chained });
    if (latched) return { result: merger.merged, decidedBy: attribution(registration, "decision") as Attribution };
  }
  return { result: merger.merged };
}
