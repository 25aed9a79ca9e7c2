import { duration, tone } from "../format.js";
import { Inert } from "../text.js";
import type { Step } from "../types.js";

const KIND_LABEL: Record<Step["kind"], string> = {
  "run-start": "start",
  "model-call": "model",
  "tool-call": "tool",
  hook: "hook",
  approval: "approval",
  retry: "retry",
  compaction: "compaction",
  subagent: "sub-agent",
  "run-end": "end",
};

/**
 * A run's steps in lifecycle order: when (after the run started), what, who decided, the
 * outcome and category, and how long — a bar scaled to the run's length.
 */
export function Steps({ steps, total }: { steps: readonly Step[]; total: number | null }) {
  const span = Math.max(
    total ?? 0,
    ...steps.filter((s) => s.kind !== "run-end").map((s) => s.offsetMs + (s.durationMs ?? 0)),
    1,
  );
  return (
    <ol class="steps">
      {steps.map((s, i) => (
        <li key={i} class={`step kind-${s.kind}`} data-kind={s.kind} data-outcome={s.outcome ?? ""}>
          <span class="offset">+{duration(s.offsetMs) || "0 ms"}</span>
          <span class="kind">{KIND_LABEL[s.kind]}</span>
          <span class="name">
            <Inert text={s.name} />
            {s.step !== null && <span class="dim"> · step {s.step}</span>}
          </span>
          <span class="plugin">{s.pluginId !== null && <Inert text={s.pluginId} />}</span>
          <span class="outcome">
            {s.outcome !== null && <span class={`pill ${tone(s.outcome)}`}>{s.outcome}</span>}
            {s.category !== null && (
              <span class="pill category">
                <Inert text={s.category} />
              </span>
            )}
          </span>
          <span class="duration">{duration(s.durationMs)}</span>
          <span class="bar" aria-hidden="true">
            <span
              style={{
                // The run's end spans the whole run.
                marginLeft: `${s.kind === "run-end" ? 0 : (100 * s.offsetMs) / span}%`,
                width: `${Math.max(0.5, (100 * (s.durationMs ?? 0)) / span)}%`,
              }}
            />
          </span>
        </li>
      ))}
    </ol>
  );
}
