import { domainToASCII } from "node:url";

/**
 * The one spelling of a host name that every network rule compares: `WebFetch(domain:…)`
 * permission and `if` rules, the sandbox's domain allowlist, and WebFetch's own checks.
 * Case is folded, a trailing dot (the DNS root) dropped, Unicode labels turned into their IDNA
 * (punycode) form, and IPv6 brackets removed. A rule and a URL that name the same host therefore
 * compare equal however either was written; a host that cannot be spelt in ASCII gives
 * undefined, which each caller treats as "cannot be read" under its own policy.
 */
export function normalizeHostname(host: string): string | undefined {
  let name = host.trim();
  if (name.startsWith("[") && name.endsWith("]")) name = name.slice(1, -1);
  if (name.includes(":")) return name.toLowerCase(); // an IPv6 literal: no labels to fold
  name = name.replace(/\.+$/, "");
  if (name === "") return undefined;
  const ascii = domainToASCII(name);
  return ascii === "" ? undefined : ascii.replace(/\.+$/, "");
}

/**
 * Whether `host` is `domain` or one of its subdomains, both normalised first. A `*.` prefix on
 * the domain (the sandbox allowlist's wildcard form) means subdomains only.
 */
export function hostInDomain(host: string, domain: string): boolean {
  const wildcard = domain.startsWith("*.");
  const h = normalizeHostname(host);
  const d = normalizeHostname(wildcard ? domain.slice(2) : domain);
  if (h === undefined || d === undefined) return false;
  if (h === d) return !wildcard;
  return h.endsWith(`.${d}`);
}
