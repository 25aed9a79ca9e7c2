import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip } from "chart.js";
import { useEffect, useRef } from "preact/hooks";
import type { AuditSummary } from "../types.js";

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Legend, Tooltip);

const COLORS = ["#c0392b", "#2e86ab", "#e67e22", "#8e44ad", "#16a085", "#7f8c8d", "#d35400", "#27ae60"];

function label(iso: string, bucket: AuditSummary["bucket"]): string {
  const d = new Date(iso);
  return bucket === "day"
    ? d.toLocaleDateString(undefined, { month: "short", day: "numeric" })
    : d.toLocaleString(undefined, { month: "short", day: "numeric", hour: "2-digit" });
}

/**
 * Decisions per plugin per bucket, stacked bars (Chart.js, bundled into the console: nothing is
 * fetched). The figures are also in the table under it. Plugin ids reach the canvas as data
 * labels, drawn as text.
 */
export function AuditChart({ summary }: { summary: AuditSummary }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    if (!canvas.current) return;
    const chart = new Chart(canvas.current, {
      type: "bar",
      data: {
        labels: summary.buckets.map((b) => label(b, summary.bucket)),
        datasets: summary.series.map((s, i) => ({
          label: s.pluginId,
          data: s.counts,
          backgroundColor: COLORS[i % COLORS.length],
          maxBarThickness: 56,
        })),
      },
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true, ticks: { precision: 0 } } },
        plugins: { legend: { position: "bottom" } },
      },
    });
    return () => chart.destroy();
  }, [summary]);
  return (
    <div class="chart" data-testid="chart">
      <canvas ref={canvas} role="img" aria-label={`${summary.outcome} decisions per plugin per ${summary.bucket}`} />
    </div>
  );
}
