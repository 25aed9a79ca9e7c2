import { useEffect, useState } from "preact/hooks";
import { AUDIT_OUTCOMES } from "../../../src/store/types.js";
import { ApiError, api, query } from "../api.js";
import { short, tone, when } from "../format.js";
import { sessionHref } from "../router.js";
import { Inert } from "../text.js";
import type { AuditList, AuditRecord, AuditSummary } from "../types.js";
import { AuditChart } from "./AuditChart.js";

const PERIODS: Record<string, number | undefined> = {
  "24h": 86_400_000,
  "7d": 7 * 86_400_000,
  "30d": 30 * 86_400_000,
  all: undefined,
};
const FILTERS = ["hook", "pluginId", "outcome", "category", "principal", "sessionId", "period"] as const;
type Filter = (typeof FILTERS)[number];

/** The filters the URL holds (#/audit?hook=…), as the API takes them. */
function apiFilters(params: URLSearchParams) {
  const span = PERIODS[params.get("period") ?? "7d"];
  const get = (name: string) => params.get(name) ?? undefined;
  return {
    hook: get("hook"),
    pluginId: get("pluginId"),
    outcome: get("outcome"),
    category: get("category"),
    principal: get("principal"),
    sessionId: get("sessionId"),
    since: span === undefined ? undefined : new Date(Date.now() - span).toISOString(),
  };
}

/** Decisions over time: filters, a chart of decisions per plugin per hour or day, the records, an export. */
export function AuditView({ admin, params }: { admin: boolean; params: URLSearchParams }) {
  const [form, setForm] = useState<Record<Filter, string>>(() => readForm(params));
  const [records, setRecords] = useState<AuditRecord[] | undefined>(undefined);
  const [summary, setSummary] = useState<AuditSummary | undefined>(undefined);
  const [error, setError] = useState("");
  const bucket = params.get("bucket") === "day" ? "day" : "hour";
  const key = params.toString();

  useEffect(() => {
    setForm(readForm(params));
    const filters = apiFilters(params);
    setError("");
    Promise.all([
      api<AuditList>(`/v1/audit${query({ ...filters, limit: 1000 })}`),
      // The chart counts blocks unless another outcome is chosen.
      api<AuditSummary>(`/v1/audit/summary${query({ ...filters, outcome: filters.outcome ?? "block", bucket })}`),
    ])
      .then(([list, s]) => {
        setRecords(list.data.slice().reverse());
        setSummary(s);
      })
      .catch((e: unknown) => setError(e instanceof ApiError ? e.message : "Could not load the audit trail."));
  }, [key]);

  const go = (next: Record<string, string>) => {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(next)) if (v) q.set(k, v);
    location.hash = `#/audit?${q.toString()}`;
  };
  const field = (name: Filter, label: string, options?: readonly string[]) => {
    const seen = [...new Set((records ?? []).map((r) => recordField(r, name)).filter((v): v is string => !!v))].sort();
    return (
      <label for={`audit-filter-${name}`}>
        {label}
        {options ? (
          <select
            id={`audit-filter-${name}`}
            name={name}
            value={form[name]}
            onChange={(e) => setForm({ ...form, [name]: e.currentTarget.value })}
          >
            <option value="">any</option>
            {options.map((o) => (
              <option key={o} value={o}>
                {o}
              </option>
            ))}
          </select>
        ) : (
          <>
            <input
              id={`audit-filter-${name}`}
              name={name}
              list={`audit-${name}`}
              value={form[name]}
              onInput={(e) => setForm({ ...form, [name]: e.currentTarget.value })}
            />
            <datalist id={`audit-${name}`}>
              {seen.map((v) => (
                <option key={v} value={v} />
              ))}
            </datalist>
          </>
        )}
      </label>
    );
  };
  const filters = apiFilters(params);
  const exportHref = (format: "csv" | "jsonl") => `/v1/audit/export${query({ ...filters, format, limit: 10_000 })}`;

  return (
    <section>
      <h1>Audit</h1>
      <form
        class="filters audit-filters"
        onSubmit={(e) => {
          e.preventDefault();
          go({ ...form, bucket });
        }}
      >
        {field("hook", "Hook")}
        {field("pluginId", "Plugin")}
        {field("outcome", "Outcome", AUDIT_OUTCOMES)}
        {field("category", "Category")}
        {admin && field("principal", "Principal")}
        <label>
          Period
          <select
            name="period"
            value={form.period}
            onChange={(e) => setForm({ ...form, period: e.currentTarget.value })}
          >
            <option value="24h">last 24 hours</option>
            <option value="7d">last 7 days</option>
            <option value="30d">last 30 days</option>
            <option value="all">all</option>
          </select>
        </label>
        <button type="submit">Filter</button>
        {form.sessionId && (
          <span class="dim">
            session <Inert text={form.sessionId} />
          </span>
        )}
      </form>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {summary && (
        <div class="panel">
          <header class="panel-head">
            <h2>
              {summary.outcome} decisions per plugin per {summary.bucket}
            </h2>
            <span class="toggle">
              <button type="button" disabled={bucket === "hour"} onClick={() => go({ ...form, bucket: "hour" })}>
                by hour
              </button>
              <button type="button" disabled={bucket === "day"} onClick={() => go({ ...form, bucket: "day" })}>
                by day
              </button>
            </span>
          </header>
          {summary.series.length === 0 ? <p class="empty">None in this period.</p> : <AuditChart summary={summary} />}
          {summary.series.length > 0 && (
            <table class="grid compact" data-testid="chart-totals">
              <tbody>
                {summary.series.map((s) => (
                  <tr key={s.pluginId}>
                    <td>
                      <Inert text={s.pluginId} />
                    </td>
                    <td class="num">{s.counts.reduce((a, b) => a + b, 0)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </div>
      )}
      <p class="exports">
        Export these records: <a href={exportHref("csv")}>CSV</a> · <a href={exportHref("jsonl")}>JSON Lines</a>
      </p>
      {records === undefined ? (
        <p class="loading">Loading…</p>
      ) : records.length === 0 ? (
        <p class="empty">No decisions match.</p>
      ) : (
        <table class="grid" data-testid="audit">
          <thead>
            <tr>
              <th>When</th>
              <th>Hook</th>
              <th>Plugin</th>
              <th>Outcome</th>
              <th>Category</th>
              <th>Principal</th>
              <th>Session</th>
            </tr>
          </thead>
          <tbody>
            {records.map((r) => (
              <tr key={r.id}>
                <td>{when(r.at)}</td>
                <td>
                  <Inert text={r.hook} />
                </td>
                <td>
                  <Inert text={r.pluginId} />
                </td>
                <td>
                  <span class={`pill ${tone(r.outcome)}`}>{r.outcome}</span>
                </td>
                <td>{r.category !== null && <Inert text={r.category} />}</td>
                <td>{r.principal ? <Inert text={r.principal} /> : <span class="dim">—</span>}</td>
                <td>
                  {r.sessionId !== null && (
                    <a href={sessionHref(r.sessionId)}>
                      <Inert text={short(r.sessionId)} />
                    </a>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function readForm(params: URLSearchParams): Record<Filter, string> {
  return Object.fromEntries(FILTERS.map((f) => [f, params.get(f) ?? (f === "period" ? "7d" : "")])) as Record<
    Filter,
    string
  >;
}

function recordField(r: AuditRecord, name: Filter): string | null | undefined {
  switch (name) {
    case "hook":
      return r.hook;
    case "pluginId":
      return r.pluginId;
    case "category":
      return r.category;
    case "principal":
      return r.principal;
    default:
      return undefined;
  }
}
