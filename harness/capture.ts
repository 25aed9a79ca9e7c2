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

/** Keeps a copy of everything written to stdout and stderr (and still writes it) until restored. */
export function captureStdio(): { text(): string; restore(): void } {
  const chunks: string[] = [];
  const originals = { out: process.stdout.write, err: process.stderr.write };
  const wrap = (original: typeof process.stdout.write, stream: NodeJS.WriteStream) =>
    ((chunk: unknown, ...rest: unknown[]) => {
      chunks.push(typeof chunk === "string" ? chunk : Buffer.from(chunk as Uint8Array).toString("utf8"));
      return (original as (...args: unknown[]) => boolean).call(stream, chunk, ...rest);
    }) as typeof process.stdout.write;
  process.stdout.write = wrap(originals.out, process.stdout);
  process.stderr.write = wrap(originals.err, process.stderr);
  return {
    text: () => chunks.join(""),
    restore: () => {
      process.stdout.write = originals.out;
      process.stderr.write = originals.err;
    },
  };
}
