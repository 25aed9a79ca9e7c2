import { trace } from "@opentelemetry/api";
import type { BasicTracerProvider, ReadableSpan, SpanProcessor } from "@opentelemetry/sdk-trace-base";
import { importOnDemand } from "../scripts/on-demand.js";
import type { HostLogger } from "../src/plugins/host.js";

/** A logger that keeps every line. */
export function captureLogger(): { logger: HostLogger; lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    logger: {
      debug: (m) => void lines.push(`debug ${m}`),
      info: (m) => void lines.push(`info ${m}`),
      warn: (m) => void lines.push(`warn ${m}`),
      error: (m) => void lines.push(`error ${m}`),
    },
  };
}

// One tap on stdout and stderr, shared by every capture open at the time (scenarios may run side
// by side): each keeps everything written while it is open, and the streams still get it.
const open = new Set<string[]>();
let originals: { out: typeof process.stdout.write; err: typeof process.stderr.write } | undefined;

function install(): void {
  const saved = { out: process.stdout.write, err: process.stderr.write };
  originals = saved;
  const wrap = (original: typeof process.stdout.write, stream: NodeJS.WriteStream) =>
    ((chunk: unknown, ...rest: unknown[]) => {
      const text = typeof chunk === "string" ? chunk : Buffer.from(chunk as Uint8Array).toString("utf8");
      for (const chunks of open) chunks.push(text);
      return (original as (...args: unknown[]) => boolean).call(stream, chunk, ...rest);
    }) as typeof process.stdout.write;
  process.stdout.write = wrap(saved.out, process.stdout);
  process.stderr.write = wrap(saved.err, process.stderr);
}

/** Keeps a copy of everything written to stdout and stderr (and still writes it) until restored. */
export function captureStdio(): { text(): string; restore(): void } {
  const chunks: string[] = [];
  if (open.size === 0) install();
  open.add(chunks);
  return {
    text: () => chunks.join(""),
    restore: () => {
      if (!open.delete(chunks) || open.size > 0 || !originals) return;
      process.stdout.write = originals.out;
      process.stderr.write = originals.err;
      originals = undefined;
    },
  };
}

// One tracer provider for the process, registered the first time a capture opens: the server's
// tracing interceptor (src/server/telemetry.ts) then records real spans, which every capture
// open at the time keeps as text (name, attributes, events, status), as an exporter would send them.
// OpenTelemetry's SDK is installed on first use (scripts/on-demand.ts): only the server needs the API.
const spanCaptures = new Set<string[]>();
let provider: Promise<BasicTracerProvider> | undefined;

async function registerProvider(): Promise<BasicTracerProvider> {
  const { BasicTracerProvider } = await importOnDemand<typeof import("@opentelemetry/sdk-trace-base")>(
    "@opentelemetry/sdk-trace-base",
  );
  const processor: SpanProcessor = {
    onStart: () => {},
    onEnd: (span: ReadableSpan) => {
      const text = JSON.stringify({
        name: span.name,
        attributes: span.attributes,
        events: span.events,
        status: span.status,
      });
      for (const chunks of spanCaptures) chunks.push(text);
    },
    forceFlush: async () => {},
    shutdown: async () => {},
  };
  const registered = new BasicTracerProvider({ spanProcessors: [processor] });
  trace.setGlobalTracerProvider(registered);
  return registered;
}

/** Keeps every OpenTelemetry span that ends (in this process) until restored. */
export async function captureSpans(): Promise<{ text(): string; restore(): void }> {
  provider ??= registerProvider();
  await provider;
  const chunks: string[] = [];
  spanCaptures.add(chunks);
  return { text: () => chunks.join("\n"), restore: () => void spanCaptures.delete(chunks) };
}
