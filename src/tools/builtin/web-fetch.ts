import { lookup as systemLookup } from "node:dns";
import { isIP, type LookupFunction } from "node:net";
import type { Response } from "undici";
import { z } from "zod";
import { type Tool, ToolError } from "../types.js";

/**
 * Claude Code's WebFetch: an HTTP GET of one URL, its content as text. Bounded in time and size;
 * redirects are followed only within the same host (another host is reported, as Claude Code
 * does, for the model to fetch if it means to). By default it refuses addresses of the machine's
 * own networks (loopback, private, link-local: a prompt must not turn it into a way into them).
 * Unlike Claude Code, `prompt` is not run by a second model: the text goes to the agent's model,
 * whose own reading of `prompt` decides what it takes from it.
 */
export const WebFetchInputSchema = z.object({
  url: z.url({ protocol: /^https?$/ }).describe("The URL to fetch (http is upgraded to https)"),
  prompt: z.string().describe("What to look for in the page"),
});
export type WebFetchInput = z.infer<typeof WebFetchInputSchema>;

export interface WebFetchOptions {
  /** Largest body read (default 5 MiB); the rest is not downloaded. */
  readonly maxBytes?: number;
  /** Default 30 s for the whole fetch. */
  readonly timeoutMs?: number;
  /** Text given to the model at most (default 100,000 characters). */
  readonly maxChars?: number;
  /** Allow loopback, private and link-local addresses (default false). */
  readonly allowPrivateNetwork?: boolean;
  /** How host names resolve (default: the system's resolver); tests stand in a changing DNS answer. */
  readonly lookup?: LookupFunction;
}

export interface WebFetchOutput {
  readonly url: string;
  readonly code: number;
  readonly codeText: string;
  readonly bytes: number;
  readonly result: string;
  readonly durationMs: number;
}

const DEFAULTS = { maxBytes: 5 * 1024 * 1024, timeoutMs: 30_000, maxChars: 100_000 };
const MAX_REDIRECTS = 5;

export function createWebFetchTool(options: WebFetchOptions = {}): Tool<WebFetchInput, WebFetchOutput> {
  const { maxBytes, timeoutMs, maxChars } = { ...DEFAULTS, ...options };
  const resolve = options.lookup ?? (systemLookup as LookupFunction);
  const lookup = options.allowPrivateNetwork ? resolve : publicOnly(resolve);
  // The address is checked again where the connection is made: a DNS answer that changes between
  // the check below and the connection (rebinding) must not reach a private network either.
  // undici (and html-to-text) load on the first fetch, not with the CLI: large, and WebFetch is opt-in.
  let client: Promise<{ fetch: typeof import("undici").fetch; dispatcher: import("undici").Agent }> | undefined;
  const connect = () =>
    (client ??= import("undici").then(({ Agent, fetch }) => ({
      fetch,
      dispatcher: new Agent({ connect: { lookup } }),
    })));
  return {
    name: "WebFetch",
    description:
      "Fetches a URL with an HTTP GET and returns its content as text (HTML converted), with the prompt saying " +
      "what to look for. Redirects to another host are reported, not followed. Content is capped in size.",
    inputSchema: WebFetchInputSchema,
    parallel: true,
    async execute(input, ctx) {
      const started = performance.now();
      const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(timeoutMs)]);
      let url = new URL(input.url);
      for (let hops = 0; ; hops++) {
        const local = await isLocalHost(url.hostname, resolve);
        if (local && !options.allowPrivateNetwork)
          throw new ToolError(
            `WebFetch does not fetch ${url.hostname}: it is an address of a local or private network`,
          );
        // As Claude Code does; a local server (allowed above) keeps plain http.
        if (url.protocol === "http:" && !local) url.protocol = "https:";
        let res: Response;
        try {
          const { fetch, dispatcher } = await connect();
          res = await fetch(url, {
            redirect: "manual",
            signal,
            dispatcher,
            headers: { accept: "text/html, text/*;q=0.9, */*;q=0.5" },
          });
        } catch (e) {
          if (ctx.signal.aborted) throw e;
          if (privateAddressRefused(e))
            throw new ToolError(
              `WebFetch does not fetch ${url.hostname}: it resolved to an address of a local or private network`,
            );
          throw new ToolError(signal.aborted ? `Fetching ${url} timed out` : `Fetching ${url} failed: ${describe(e)}`);
        }
        const location = res.headers.get("location");
        if (res.status >= 300 && res.status < 400 && location) {
          await res.body?.cancel();
          const next = new URL(location, url);
          if (next.host !== url.host)
            return output(
              url,
              res,
              0,
              `REDIRECT DETECTED: ${url} redirects to another host: ${next}. Fetch that URL to follow it.`,
              started,
            );
          if (hops >= MAX_REDIRECTS) throw new ToolError(`Too many redirects fetching ${input.url}`);
          url = next;
          continue;
        }
        const { text: body, bytes, cut } = await readCapped(res, maxBytes);
        const type = res.headers.get("content-type") ?? "";
        let text: string;
        if (/html/i.test(type) || (!type && /^\s*</.test(body)))
          text = (await import("html-to-text")).convert(body, { wordwrap: false });
        else if (/^text\/|json|xml|javascript/i.test(type) || !type) text = body;
        else {
          throw new ToolError(`${url} is ${type.split(";")[0]}, not text: WebFetch returns text only`);
        }
        if (cut) text += `\n[…the page was cut at ${maxBytes} bytes]`;
        if (text.length > maxChars) text = `${text.slice(0, maxChars)}\n[…cut at ${maxChars} characters]`;
        return output(url, res, bytes, text, started);
      }
    },
    toModelOutput: (o) => o.result,
  };
}

function output(url: URL, res: Response, bytes: number, result: string, started: number): WebFetchOutput {
  return {
    url: url.toString(),
    code: res.status,
    codeText: res.statusText,
    bytes,
    result,
    durationMs: performance.now() - started,
  };
}

async function readCapped(res: Response, maxBytes: number): Promise<{ text: string; bytes: number; cut: boolean }> {
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  let cut = false;
  if (res.body) {
    const reader = res.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const room = maxBytes - bytes;
      if (value.length >= room) {
        chunks.push(value.subarray(0, room));
        bytes += room;
        cut = true;
        await reader.cancel();
        break;
      }
      chunks.push(value);
      bytes += value.length;
    }
  }
  return { text: new TextDecoder().decode(Buffer.concat(chunks)), bytes, cut };
}

/** Whether a host is, or resolves to, an address of the machine's own networks. */
async function isLocalHost(hostname: string, resolve: LookupFunction): Promise<boolean> {
  const host = hostname.replace(/^\[|\]$/g, "");
  if (isIP(host)) return isPrivateAddress(host);
  const addresses = await new Promise<string[]>((done) =>
    resolve(host, { all: true }, (error, found) =>
      done(error || !Array.isArray(found) ? [] : found.map((a) => a.address)),
    ),
  );
  return addresses.some(isPrivateAddress);
}

const PRIVATE_ADDRESS = "EGATEHOUSE_PRIVATE_ADDRESS";

/** A resolver for the connection that fails when any address it would connect to is private. */
function publicOnly(resolve: LookupFunction): LookupFunction {
  return (hostname, options, callback) =>
    resolve(hostname, options, (error, address, family) => {
      const addresses = typeof address === "string" ? [address] : (address ?? []).map((a) => a.address);
      if (!error && addresses.some(isPrivateAddress)) {
        const refused: NodeJS.ErrnoException = new Error(`${hostname} resolved to a private address`);
        refused.code = PRIVATE_ADDRESS;
        return callback(refused, "", 0);
      }
      callback(error, address as string, family);
    });
}

function privateAddressRefused(e: unknown): boolean {
  for (let c: unknown = e, depth = 0; c instanceof Error && depth < 5; c = c.cause, depth++)
    if ((c as NodeJS.ErrnoException).code === PRIVATE_ADDRESS) return true;
  return false;
}

export function isPrivateAddress(address: string): boolean {
  const v4 = /^(?:::ffff:)?(\d+)\.(\d+)\.(\d+)\.(\d+)$/i.exec(address);
  if (v4) {
    const [a, b] = [Number(v4[1]), Number(v4[2])];
    return (
      a === 0 ||
      a === 10 ||
      a === 127 ||
      (a === 100 && b >= 64 && b <= 127) ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) ||
      a >= 224
    );
  }
  const v6 = address.toLowerCase();
  return v6 === "::1" || v6 === "::" || /^f[cd]/.test(v6) || /^fe[89ab]/.test(v6) || /^ff/.test(v6);
}

function describe(e: unknown): string {
  const cause = (e as { cause?: { code?: string } }).cause;
  return cause?.code ?? (e as Error).message;
}
