import { DEFAULT_ENV_POLICY, type Env, type EnvPolicy } from "./env-policy.js";
import { MASK } from "./secrets.js";

/**
 * Secrets masked by value: the values the environment policy withholds from the model's tools
 * (provider credentials, Gatehouse's own secrets, the operator's `environment.deny`), wherever
 * they appear in text a tool or a command hook hands back. A process may find a value it was not
 * given (`/proc/$PPID/environ`, a `.env` file, a hook that runs unsandboxed): what it prints is
 * masked before the model, the store or another hook reads it.
 *
 * Which values: a variable the policy removes from the Bash tool's environment as a provider
 * credential, a Gatehouse secret or a denied name. One that `tools.bash.passEnv` hands the Bash
 * tool is not masked: the model's own commands were given it. Values shorter than
 * `MIN_MASKED_LENGTH` are left alone: `1`, `true`, `default` or `us-east` are not secrets, and
 * masking them everywhere would garble every output that happens to contain them.
 *
 * Which spellings: the value as it is, as a JSON string escapes it, as a URL encodes it, and in
 * base64 (standard and URL-safe) at each of the three alignments it can take inside a longer
 * encoded text (the characters that depend on the value alone, as GitHub Actions masks). Any other
 * transformation (reversed, hex, split over lines) passes: masking catches a process that prints a
 * secret, not one that hides it on purpose; that is the sandbox's part.
 */

/** Shorter values are not masked (see above). Provider keys are 20 characters and more. */
export const MIN_MASKED_LENGTH = 8;

/** A masker that knows a set of secret values. */
export interface SecretMasker {
  /** `text` with every known spelling of every value replaced by `****`. */
  mask(text: string): string;
  /** A copy of a JSON-like value with every string in it masked; the value itself when nothing changed. */
  maskDeep<T>(value: T): T;
  /** A masker that knows these values too. */
  with(values: Iterable<string>): SecretMasker;
  /** How many values it masks (0: `mask` returns its input). */
  readonly size: number;
}

/** Whether `name` holds a value the model's tools were not given (see above). */
export function isWithheldSecret(name: string, policy: EnvPolicy = DEFAULT_ENV_POLICY): boolean {
  const why = policy.removal(name, "bash");
  return why === "provider-credential" || why === "gatehouse" || why === "denied";
}

/** The values of `envs`' withheld secrets (see `isWithheldSecret`), long enough to be masked. */
export function withheldValues(envs: readonly Env[], policy: EnvPolicy = DEFAULT_ENV_POLICY): string[] {
  const values = new Set<string>();
  for (const env of envs)
    for (const [name, value] of Object.entries(env))
      if (value !== undefined && value.length >= MIN_MASKED_LENGTH && isWithheldSecret(name, policy)) values.add(value);
  return [...values];
}

/** A masker for the withheld secrets of `envs` under `policy`. */
export function envMasker(envs: readonly Env[], policy: EnvPolicy = DEFAULT_ENV_POLICY): SecretMasker {
  return createSecretMasker(withheldValues(envs, policy));
}

export function createSecretMasker(values: Iterable<string>): SecretMasker {
  const known = new Set([...values].filter((v) => v.length >= MIN_MASKED_LENGTH));
  const forms = new Set<string>();
  for (const value of known) for (const form of spellings(value)) forms.add(form);
  // Longest first: a value that contains another is masked whole.
  const pattern =
    forms.size === 0
      ? undefined
      : new RegExp(
          [...forms]
            .sort((a, b) => b.length - a.length)
            .map(escapeRegExp)
            .join("|"),
          "g",
        );
  const mask = (text: string) => (pattern === undefined ? text : text.replace(pattern, MASK));
  const maskDeep = <T>(value: T): T => (pattern === undefined ? value : (deep(value, mask) as T));
  return {
    mask,
    maskDeep,
    with: (more) => createSecretMasker([...known, ...more]),
    size: known.size,
  };
}

/** Every spelling of `value` that is masked. */
export function spellings(value: string): string[] {
  const out = new Set([value, JSON.stringify(value).slice(1, -1), encodeURIComponent(value)]);
  for (const b64 of base64Cores(Buffer.from(value, "utf8"))) {
    out.add(b64);
    out.add(b64.replace(/\+/g, "-").replace(/\//g, "_"));
  }
  return [...out].filter((s) => s.length >= MIN_MASKED_LENGTH);
}

/**
 * The base64 characters that encode `bytes` alone when they start at each offset modulo 3 of a
 * longer text: the characters that mix in a neighbour's bits are dropped at both ends.
 */
function base64Cores(bytes: Buffer): string[] {
  const cores: string[] = [];
  for (let shift = 0; shift < 3; shift++) {
    const padded = Buffer.concat([Buffer.alloc(shift), bytes, Buffer.alloc(2)]);
    const encoded = padded.toString("base64");
    const firstBit = shift * 8;
    const endBit = (shift + bytes.length) * 8;
    const first = Math.ceil(firstBit / 6);
    const end = Math.floor(endBit / 6);
    if (end > first) cores.push(encoded.slice(first, end));
  }
  return cores;
}

function deep(value: unknown, mask: (text: string) => string): unknown {
  if (typeof value === "string") return mask(value);
  if (Array.isArray(value)) {
    let changed = false;
    const out = value.map((item) => {
      const m = deep(item, mask);
      if (m !== item) changed = true;
      return m;
    });
    return changed ? out : value;
  }
  if (value === null || typeof value !== "object") return value;
  if (!isPlainObject(value)) return viaJson(value, mask);
  let changed = false;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const key = mask(k);
    const m = deep(v, mask);
    if (m !== v || key !== k) changed = true;
    out[key] = m;
  }
  return changed ? out : value;
}

/** A class instance (a plugin tool may return one) is stored as its JSON: masked as that JSON. */
function viaJson(value: object, mask: (text: string) => string): unknown {
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch {
    return value;
  }
  if (json === undefined) return value;
  const masked = mask(json);
  if (masked === json) return value;
  try {
    return JSON.parse(masked);
  } catch {
    return masked;
  }
}

function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
