export function when(iso: string | null | undefined): string {
  if (!iso) return "—";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium" });
}

export function ago(iso: string): string {
  const s = Math.round((Date.now() - Date.parse(iso)) / 1000);
  if (s < 60) return `${Math.max(0, s)} s ago`;
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} d ago`;
}

export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "";
  if (ms < 1) return `${ms.toFixed(2)} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

export function short(id: string): string {
  return id.length > 12 ? `${id.slice(0, 8)}…` : id;
}

/** Outcomes that mean something was stopped, in red; those that mean it went ahead, in green. */
export function tone(outcome: string | null | undefined): string {
  switch (outcome) {
    case "block":
    case "blocked":
    case "deny":
    case "denied":
    case "withheld":
    case "cancel":
    case "cancelled":
    case "error":
    case "failed":
    case "timeout":
    case "invalid":
      return "bad";
    case "claim":
    case "claimed":
    case "modify":
    case "revise":
    case "asked":
      return "warn";
    case "approve":
    case "ok":
    case "completed":
      return "good";
    default:
      return "plain";
  }
}
