import { BlockList, isIP } from "node:net";
import { isAbsolute, join, resolve } from "node:path";
import { hostInDomain, normalizeHostname } from "../core/hostname.js";
import type { PermissionRule } from "../permissions/rules.js";
import type { SandboxSettings } from "./settings.js";

/**
 * What one sandboxed command may touch (docs/security.md#sandbox): the `sandbox` settings block
 * joined with the permission rules, as Claude Code joins them. Paths are absolute.
 */
export interface SandboxPolicy {
  readonly filesystem: SandboxSettings["filesystem"];
  /**
   * `allowedDomains` adds the `WebFetch(domain:…)` allow rules to the setting's, `deniedDomains`
   * the deny rules. `askForOthers` is false under managed `allowManagedDomainsOnly`: a host no
   * list names is then refused, never asked about.
   */
  readonly network: Omit<SandboxSettings["network"], "allowManagedDomainsOnly"> & { readonly askForOthers: boolean };
}

/** Files a command has no business reading, whatever the rules say: keys, cloud logins, Gatehouse's own store. */
export function credentialPaths(homeDir: string, projectDir: string): string[] {
  return [
    join(homeDir, ".ssh"),
    join(homeDir, ".aws"),
    join(homeDir, ".config", "gcloud"),
    join(homeDir, ".azure"),
    join(homeDir, ".gnupg"),
    join(homeDir, ".docker", "config.json"),
    join(homeDir, ".netrc"),
    join(projectDir, ".gatehouse"),
  ];
}

export interface SandboxPolicyOptions {
  readonly projectDir: string;
  readonly homeDir: string;
  /** More folders writes may go to (the permission policy's `additionalDirectories`). */
  readonly additionalDirectories?: readonly string[];
  /** Gatehouse's data folder when it is not the project's `.gatehouse/`. */
  readonly dataDir?: string;
}

/**
 * Writes: the project, the sandbox's temp folder, `sandbox.filesystem.allowWrite` and the paths
 * of `Edit(…)` allow rules; `denyWrite` and `Edit(…)` deny rules win inside them. Reads:
 * everything but `denyRead`, the paths of `Read(…)` deny rules and the credential files
 * (`allowRead` re-opens inside a denied folder). Network: see `decideHost`.
 */
export function sandboxPolicy(
  settings: SandboxSettings,
  rules: readonly PermissionRule[],
  options: SandboxPolicyOptions,
): SandboxPolicy {
  const { projectDir, homeDir } = options;
  const paths = (tool: "Edit" | "Read", behavior: PermissionRule["behavior"]) =>
    rules
      .filter((r) => r.behavior === behavior && r.parsed.tool === tool && r.parsed.specifier !== undefined)
      .map((r) => rulePath(r.parsed.specifier as string, r.baseDir, homeDir));
  const webFetchDomains = (behavior: PermissionRule["behavior"], managedOnly: boolean) =>
    rules
      .filter((r) => r.behavior === behavior && r.parsed.tool === "WebFetch")
      .filter((r) => !managedOnly || r.source === "managed")
      .map((r) => /^domain:(.+)$/.exec(r.parsed.specifier ?? "")?.[1]?.trim())
      .filter((d): d is string => d !== undefined && d !== "");
  const managedOnly = settings.network.allowManagedDomainsOnly;
  const gatehouseData = [join(projectDir, ".gatehouse"), ...(options.dataDir ? [resolve(options.dataDir)] : [])];
  return {
    filesystem: {
      allowWrite: [
        projectDir,
        ...(options.additionalDirectories ?? []),
        ...settings.filesystem.allowWrite,
        ...paths("Edit", "allow").flatMap((p) => (p.glob ? [] : [p.path])),
      ],
      denyWrite: [...settings.filesystem.denyWrite, ...paths("Edit", "deny").map((p) => p.path), ...gatehouseData],
      denyRead: [
        ...new Set([
          ...credentialPaths(homeDir, projectDir),
          ...gatehouseData,
          ...settings.filesystem.denyRead,
          ...paths("Read", "deny").map((p) => p.path),
        ]),
      ],
      allowRead: [...settings.filesystem.allowRead],
    },
    network: {
      allowedDomains: [...settings.network.allowedDomains, ...webFetchDomains("allow", managedOnly)],
      deniedDomains: [...settings.network.deniedDomains, ...webFetchDomains("deny", false)],
      allowUnixSockets: settings.network.allowUnixSockets,
      allowAllUnixSockets: settings.network.allowAllUnixSockets,
      allowLocalBinding: settings.network.allowLocalBinding,
      askForOthers: !managedOnly,
    },
  };
}

/**
 * A `Read(…)` / `Edit(…)` rule's path as the sandbox spells it: `//abs` absolute, `~/p` in the
 * home folder, `/p`, `./p` and `p/q` in the rule's project, and a bare name (`.env`, `*.pem`)
 * at any depth under it. A trailing `/**` is the folder itself.
 */
export function rulePath(specifier: string, baseDir: string, homeDir: string): { path: string; glob: boolean } {
  let p = specifier.trim().replace(/\/\*\*$/, "");
  if (p.startsWith("//")) p = p.slice(1);
  else if (p.startsWith("~/")) p = join(homeDir, p.slice(2));
  else {
    const rel = p.replace(/^\.?\//, "");
    p = rel.includes("/") ? resolve(baseDir, rel) : join(baseDir, "**", rel);
  }
  if (!isAbsolute(p)) p = resolve(baseDir, p);
  return { path: p, glob: /[*?[\]{}]/.test(p) };
}

// Two lists: a BlockList checks an IPv4 address against its IPv6 rules too (as ::ffff:a.b.c.d).
const SPECIAL_V4 = new BlockList();
const SPECIAL_V6 = new BlockList();
for (const [net, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["224.0.0.0", 3],
] as const)
  SPECIAL_V4.addSubnet(net, prefix, "ipv4");
for (const [net, prefix] of [
  ["::", 96], // unspecified, loopback and IPv4-compatible
  ["::ffff:0:0", 96], // IPv4-mapped
  ["64:ff9b::", 96], // NAT64
  ["64:ff9b:1::", 48],
  ["2002::", 16], // 6to4 carries an IPv4 address
  ["fc00::", 7],
  ["fe80::", 10],
  ["fec0::", 10],
  ["ff00::", 8],
  ["fd00:ec2::254", 128], // AWS's IPv6 metadata address (inside fc00::/7 too)
] as const)
  SPECIAL_V6.addSubnet(net, prefix, "ipv6");

/**
 * The address a host names when it is an IP literal in any spelling the URL parser accepts
 * (`2130706433`, `127.1`, `0x7f.0.0.1`, `[::ffff:127.0.0.1]`), else undefined.
 */
export function ipLiteral(host: string): string | undefined {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  if (isIP(bare) !== 0) return bare.toLowerCase();
  try {
    const parsed = new URL(`http://${bare.includes(":") ? `[${bare}]` : bare}/`).hostname;
    const inner = parsed.startsWith("[") ? parsed.slice(1, -1) : parsed;
    return isIP(inner) !== 0 ? inner : undefined;
  } catch {
    return undefined;
  }
}

/** Loopback, private, link-local (cloud metadata among them), multicast, or an IPv6 form carrying any IPv4. */
export function isSpecialAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  return family === 4 ? SPECIAL_V4.check(address, "ipv4") : SPECIAL_V6.check(address, "ipv6");
}

export type HostDecision =
  | { readonly verdict: "allow" | "deny"; readonly reason: string }
  | { readonly verdict: "ask"; readonly reason: string };

/**
 * Where a connection a sandboxed command opens may go, before anyone is asked: a denied domain
 * is refused; a named domain (or the exact IP literal) is allowed; any other IP literal in a
 * private, loopback or link-local range is refused; the rest is asked about (refused under
 * `allowManagedDomainsOnly`). Names are compared with `hostInDomain`, as every network rule is.
 * A name that resolves to a private address is refused by the sandbox's proxy itself.
 */
export function decideHost(policy: SandboxPolicy["network"], host: string): HostDecision {
  const name = normalizeHostname(host);
  if (name === undefined) return { verdict: "deny", reason: "the host name cannot be read" };
  const literal = ipLiteral(host);
  const names = (entry: string) =>
    literal === undefined ? hostInDomain(name, entry) : ipLiteral(entry.replace(/:\d+$/, "")) === literal;
  if (policy.deniedDomains.some(names)) return { verdict: "deny", reason: "the host is on the deny list" };
  if (policy.allowedDomains.some(names)) return { verdict: "allow", reason: "the host is on the allow list" };
  if (literal !== undefined && isSpecialAddress(literal))
    return { verdict: "deny", reason: "private, loopback and link-local addresses are not reachable from the sandbox" };
  if (!policy.askForOthers) return { verdict: "deny", reason: "managed settings allow only their own domains" };
  return { verdict: "ask", reason: "no setting names the host" };
}
