import type { Status } from "../invoke.js";
import { Merger } from "../merge.js";
import type { Registration } from "../registry.js";
import type { Attribution } from "../types.js";
import { CONTINUE, Sequence } from "./sequence.js";
import { attribution, type Dispatch, errorDetail, validateResult } from "./shared.js";

export interface ModifyDispatchOutcome {
  readonly result: Record<string, unknown>;
  readonly decidedBy?: Attribution;
  /** The handler that set the hook's `stopField` first. */
  readonly stoppedBy?: Attribution;
}

/**
 * Sequential, in priority order; each result validated and merged by rule. A latch (a block
 * decision, or a failure under fail-closed) stops the remaining handlers.
 */
export function dispatchModify(d: Dispatch): Promise<ModifyDispatchOutcome> {
  return new Modify(d).run();
}

class Modify extends Sequence<ModifyDispatchOutcome> {
  private readonly merger: Merger;
  private readonly matchValue: string | undefined;
  private current: Readonly<Record<string, unknown>>;
  private stoppedBy: Attribution | undefined;

  constructor(d: Dispatch) {
    super(d);
    this.merger = new Merger(d.spec.rules ?? {});
    this.matchValue = d.spec.matcher === undefined ? undefined : String(d.event[d.spec.matcher]);
    this.current = d.event;
  }

  protected override event(): Readonly<Record<string, unknown>> {
    return this.current;
  }

  protected override skips(registration: Registration): boolean {
    return registration.matches !== undefined && !registration.matches(this.matchValue as string);
  }

  protected step(registration: Registration, status: Status, value: unknown): ModifyDispatchOutcome | typeof CONTINUE {
    const { spec, failures } = this.d;
    const { merger } = this;
    let cause: "threw" | "timeout" | "invalid";
    let detail = "";
    if (status === "ok") {
      if (value === undefined) return CONTINUE;
      const validated = validateResult(this.d, value, this.current);
      if (typeof validated !== "string") {
        const latched = merger.apply(validated);
        if (merger.chained) this.current = Object.freeze({ ...this.current, ...merger.chained });
        if (spec.stopField !== undefined && validated[spec.stopField] !== undefined)
          this.stoppedBy ??= attribution(registration, "decision");
        if (latched) return this.outcome(attribution(registration, "decision"));
        return CONTINUE;
      }
      cause = "invalid";
      detail = validated;
    } else {
      cause = status as "threw" | "timeout";
      if (status === "threw") detail = errorDetail(value);
    }
    const closed = registration.failure === "closed" && spec.blockField !== undefined;
    failures.report(registration, cause, detail, closed);
    if (!closed) return CONTINUE;
    merger.merged[spec.blockField as string] = true;
    return this.outcome(attribution(registration, cause));
  }

  protected cancelled(registration: Registration): ModifyDispatchOutcome {
    const { blockField } = this.d.spec;
    if (blockField !== undefined) this.merger.merged[blockField] = true;
    return this.outcome(attribution(registration, "cancelled"));
  }

  protected end(): ModifyDispatchOutcome {
    return this.outcome(undefined);
  }

  private outcome(decidedBy: Attribution | undefined): ModifyDispatchOutcome {
    return {
      result: this.merger.merged,
      ...(decidedBy === undefined ? {} : { decidedBy }),
      ...(this.stoppedBy === undefined ? {} : { stoppedBy: this.stoppedBy }),
    };
  }
}
