import { lookup as systemLookup } from "node:dns";
import type { LookupFunction } from "node:net";
import type { Response } from "undici";
import { z } from "zod";
import {
  type AddressClass,
  addressInRange,
  classifyAddress,
  isAddressOrRange,
  isMetadataName,
  parseAddress,
} from "../../core/address.js";
import { hostInDomain, normalizeHostname } from "../../core/hostname.js";
import { type Tool, ToolError } from "../types.js";

/**
 * Claude Code's WebFetch: an HTTP GET of one URL, its content as text. Bounded in time and size;
 * redirects are followed only within the same host (another host is reported, as Claude Code
 * does, for the model to fetch if it means to). By default it refuses addresses of the machine's
 * own networks (loopback, private, link-local, unique-local, CGNAT, multicast, unspecified) and
 * cloud metadata services: a prompt must not turn it into a way into them. Each hop is checked
 * twice — its host, as written or as resolved, before the request, and the address the
 * connection is made to (a DNS answer that changes in between, rebinding) — with addresses
 * classified by `src/core/address.ts` and host names compared through `normalizeHostname`.
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
  /** Allow every local and private network's addresses (default false); cloud metadata stays refused. */
  readonly allowPrivateNetwork?: boolean;
  /**
   * Hosts that may be local or private all the same: host names (a `*.` prefix for subdomains;
   * such a name may resolve to any address, a metadata service's too), addresses and CIDR ranges
   * (`10.1.0.0/16`).
   */
  readonly allowPrivateHosts?: readonly string[];
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
  const policy = addressPolicy(options);
  // The address is checked again where the connection is made: a DNS answer that changes between
  // the check below and the connection (rebinding) must not reach a private network either.
  // undici (and html-to-text) load on the first fetch, not with the CLI: large, and WebFetch is opt-in.
  let client: Promise<{ fetch: typeof import("undici").fetch; dispatcher: import("undici").Agent }> | undefined;
  const connect = () =>
    (client ??= import("undici").then(({ Agent, fetch }) => ({
      fetch,
      dispatcher: new Agent({ connect: { lookup: guardedLookup(resolve, policy) } }),
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
        const local = await checkHost(url, resolve, policy);
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
          const refused = refusalOf(e);
          if (refused !== undefined)
            throw new ToolError(
              `WebFetch does not fetch ${url.hostname}: it resolved to an address of a local or private network (${refused})`,
            );
          throw new ToolError(signal.aborted ? `Fetching ${url} timed out` : `Fetching ${url} failed: ${describe(e)}`);
        }
        const location = res.headers.get("location");
        if (res.status >= 300 && res.status < 400 && location) {
          await res.body?.cancel();
          const next = new URL(location, url);
          if (!sameHost(next, url))
            return output(
              url,
              res,
              0,
              `REDIRECT DETECTED: ${url} redirects to another host: ${next}. Fetch that URL to follow it.`,
              started,
            );
          if (hops >= MAX_REDIRECTS) throw new ToolError(`Too many redirects fetching ${input.url}`);
          // The next hop is checked like the first: its host resolved again, its connection guarded.
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

/** The same host and port, host names compared through `normalizeHostname` (`Example.COM.` is `example.com`). */
function sameHost(a: URL, b: URL): boolean {
  return normalizeHostname(a.hostname) === normalizeHostname(b.hostname) && portOf(a) === portOf(b);
}

function portOf(url: URL): string {
  return url.port || (url.protocol === "https:" ? "443" : "80");
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

/** What WebFetch may reach besides public addresses (`allowPrivateNetwork`, `allowPrivateHosts`). */
interface AddressPolicy {
  /** Whether a host name was named: it may resolve anywhere. */
  readonly nameAllowed: (host: string) => boolean;
  /** Why an address is refused (its class), or undefined when it may be reached. */
  readonly refusal: (address: string) => AddressClass | undefined;
}

function addressPolicy(options: WebFetchOptions): AddressPolicy {
  const named = options.allowPrivateHosts ?? [];
  const ranges = named.filter(isAddressOrRange);
  const names = named.filter((entry) => !isAddressOrRange(entry));
  return {
    nameAllowed: (host) => names.some((name) => hostInDomain(host, name)),
    refusal(address) {
      const cls = classifyAddress(address) ?? "reserved";
      if (cls === "public" || ranges.some((range) => addressInRange(address, range))) return undefined;
      return options.allowPrivateNetwork && cls !== "cloud metadata" ? undefined : cls;
    },
  };
}

/**
 * Refuses a URL whose host is, or resolves to, an address `policy` refuses; true when the host is
 * local or private but allowed (then plain http is kept).
 */
async function checkHost(url: URL, resolve: LookupFunction, policy: AddressPolicy): Promise<boolean> {
  const host = normalizeHostname(url.hostname);
  if (host === undefined) throw new ToolError(`WebFetch cannot read the host name of ${url}`);
  const refusedAs = (what: string, cls: AddressClass) =>
    new ToolError(
      `WebFetch does not fetch ${url.hostname}: ${what} of a local or private network (${cls}); ` +
        "tools.webFetch.allowPrivateHosts names the hosts it may fetch all the same",
    );
  if (parseAddress(host) !== undefined) {
    const cls = policy.refusal(host);
    if (cls !== undefined) throw refusedAs("it is an address", cls);
    return classifyAddress(host) !== "public";
  }
  if (policy.nameAllowed(host)) return true;
  if (isMetadataName(host)) throw refusedAs("it is the name of a service", "cloud metadata");
  // Resolved as the connection will resolve it (`localhost.` may answer where `localhost` does not).
  const addresses = await new Promise<string[]>((done) =>
    resolve(url.hostname, { all: true }, (error, found) =>
      done(error || !Array.isArray(found) ? [] : found.map((a) => a.address)),
    ),
  );
  for (const address of addresses) {
    const cls = policy.refusal(address);
    if (cls !== undefined) throw refusedAs("it resolved to an address", cls);
  }
  return addresses.some((address) => classifyAddress(address) !== "public");
}

const PRIVATE_ADDRESS = "EGATEHOUSE_PRIVATE_ADDRESS";

/** A resolver for the connection that fails when any address it would connect to is refused. */
function guardedLookup(resolve: LookupFunction, policy: AddressPolicy): LookupFunction {
  return (hostname, options, callback) => {
    const host = normalizeHostname(hostname);
    if (host !== undefined && policy.nameAllowed(host)) return resolve(hostname, options, callback);
    resolve(hostname, options, (error, address, family) => {
      const addresses = typeof address === "string" ? [address] : (address ?? []).map((a) => a.address);
      const refused = error ? undefined : addresses.map(policy.refusal).find((cls) => cls !== undefined);
      if (refused !== undefined || (!error && host === undefined)) {
        const e: NodeJS.ErrnoException & { addressClass?: string } = new Error(
          `${hostname} resolved to a refused address`,
        );
        e.code = PRIVATE_ADDRESS;
        e.addressClass = refused ?? "unreadable host";
        return callback(e, "", 0);
      }
      callback(error, address as string, family);
    });
  };
}

/** The class of address the connection's resolver refused, if that is why the fetch failed. */
function refusalOf(e: unknown): string | undefined {
  for (let c: unknown = e, depth = 0; c instanceof Error && depth < 5; c = c.cause, depth++)
    if ((c as NodeJS.ErrnoException).code === PRIVATE_ADDRESS) return (c as { addressClass?: string }).addressClass;
  return undefined;
}

function describe(e: unknown): string {
  const cause = (e as { cause?: { code?: string } }).cause;
  return cause?.code ?? (e as Error).message;
}
