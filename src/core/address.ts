import ipaddr from "ipaddr.js";

/**
 * Which network an IP address belongs to, for every check that keeps the model's tools out of the
 * machine's own networks (WebFetch; the sandbox's network rules). Parsed by `ipaddr.js`, so every
 * spelling is one address: IPv4 in decimal, octal, hex or short form (`2130706433`, `0177.0.0.1`,
 * `0x7f.1`, `127.1`), and an IPv4 address carried inside IPv6 — mapped (`::ffff:127.0.0.1`),
 * compatible (`::127.0.0.1`), SIIT (`::ffff:0:127.0.0.1`), NAT64 (`64:ff9b::127.0.0.1`) and 6to4
 * (`2002:7f00:1::`) — is classified as the IPv4 address it reaches.
 */
export type AddressClass =
  | "public"
  | "loopback"
  | "private"
  | "link-local"
  | "unique-local"
  | "carrier-grade NAT"
  | "multicast"
  | "unspecified"
  | "broadcast"
  | "cloud metadata"
  | "NAT64 local-use"
  | "tunnel"
  | "reserved";

/** The instance metadata services of the clouds: the way from a fetch to the machine's credentials. */
const METADATA_ADDRESSES = new Set([
  "169.254.169.254", // AWS, Azure, GCP, DigitalOcean, OpenStack…
  "169.254.170.2", // AWS ECS task credentials
  "100.100.100.200", // Alibaba Cloud
  "192.0.0.192", // Oracle Cloud
  "fd00:ec2::254", // AWS over IPv6
]);

/** Host names of metadata services (normalised: lower case, no trailing dot). */
const METADATA_NAMES = new Set(["metadata.google.internal", "metadata.goog", "instance-data.ec2.internal"]);

const NAMES: Readonly<Record<string, AddressClass>> = {
  unicast: "public",
  loopback: "loopback",
  private: "private",
  deprecatedSiteLocal: "private",
  linkLocal: "link-local",
  uniqueLocal: "unique-local",
  carrierGradeNat: "carrier-grade NAT",
  multicast: "multicast",
  unspecified: "unspecified",
  broadcast: "broadcast",
  teredo: "tunnel",
};

/** The address `text` spells (brackets allowed), or undefined when it is not an IP address. */
export function parseAddress(text: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  const bare = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  return ipaddr.isValid(bare) ? ipaddr.parse(bare) : undefined;
}

/** The class of the address `text` spells, or undefined when it is not an IP address. */
export function classifyAddress(text: string): AddressClass | undefined {
  const address = parseAddress(text);
  return address === undefined ? undefined : classify(address);
}

function classify(address: ipaddr.IPv4 | ipaddr.IPv6): AddressClass {
  if (METADATA_ADDRESSES.has(address.toString())) return "cloud metadata";
  if (address.kind() === "ipv4") return NAMES[address.range()] ?? "reserved";
  const v6 = address as ipaddr.IPv6;
  const embedded = embeddedIPv4(v6);
  if (embedded === "local-use") return "NAT64 local-use";
  if (embedded !== undefined) return classify(embedded);
  return NAMES[v6.range()] ?? "reserved";
}

/** The IPv4 address an IPv6 form carries, or "local-use" for RFC 8215's NAT64 prefix (a network's own). */
function embeddedIPv4(v6: ipaddr.IPv6): ipaddr.IPv4 | "local-use" | undefined {
  const bytes = v6.toByteArray();
  const zero = (from: number, to: number) => bytes.slice(from, to).every((x) => x === 0);
  const last32 = () => new ipaddr.IPv4(bytes.slice(12, 16));
  switch (v6.range()) {
    case "ipv4Mapped":
    case "rfc6145":
      return last32();
    case "rfc6052":
      return zero(4, 12) ? last32() : "local-use";
    case "6to4":
      return new ipaddr.IPv4(bytes.slice(2, 6));
    case "unicast":
      // IPv4-compatible (`::a.b.c.d`): deprecated, but still routed by some stacks.
      return zero(0, 12) ? last32() : undefined;
    default:
      return undefined;
  }
}

/** Whether a normalised host name is a cloud metadata service's. */
export function isMetadataName(host: string): boolean {
  return METADATA_NAMES.has(host);
}

/** Whether `address` is inside `range` (an address, or a CIDR range such as `10.0.0.0/8`), both parsed. */
export function addressInRange(address: string, range: string): boolean {
  const a = parseAddress(address);
  if (a === undefined) return false;
  const plain = (x: ipaddr.IPv4 | ipaddr.IPv6) =>
    x.kind() === "ipv6" && (x as ipaddr.IPv6).isIPv4MappedAddress() ? (x as ipaddr.IPv6).toIPv4Address() : x;
  const target = plain(a);
  if (ipaddr.isValidCIDR(range)) {
    const [base, bits] = ipaddr.parseCIDR(range);
    const b = plain(base);
    const prefix = b === base ? bits : bits - 96;
    return target.kind() === b.kind() && target.match(b, prefix);
  }
  const single = parseAddress(range);
  return single !== undefined && plain(single).toString() === target.toString();
}

/** Whether `text` is an address or a CIDR range `addressInRange` reads. */
export function isAddressOrRange(text: string): boolean {
  return ipaddr.isValidCIDR(text) || parseAddress(text) !== undefined;
}
