/**
 * Secrets in text Gatehouse echoes: error and log lines (its own and those it passes on from
 * providers, MCP servers and drivers), model specs, `gatehouse config`. Masked by shape, since a
 * message does not say which of its words is a secret:
 *
 * - a URL's password (`postgres://user:****@host`, `http://bob:****@…`), and secret-looking
 *   query parameters (`?token=****`);
 * - a flag that names a secret and its value (`--token ****`, `--api-key=****`);
 * - an `Authorization`-style credential (`Bearer ****`);
 * - well-known key formats (`sk-…`, `ghp_…`, `AKIA…`, `xoxb-…`).
 *
 * `maskValue` does the same for structured configuration, adding the rules that need keys:
 * values under a secret-looking key (and everything below it), and `env` and `headers` maps.
 */

/** What a masked secret reads as: the same whatever its length. */
export const MASK = "****";

const SECRET_WORDS =
  "token|secret|password|passwd|passphrase|pass|pwd|pw|credentials?|creds|api[-_]?key|access[-_]?key|private[-_]?key|auth|authorization|cookie|session[-_]?key|client[-_]?secret|key";

/** A URL's userinfo password: everything between `user:` and the last `@` of the authority. */
const URL_PASSWORD = /(\b[a-z][a-z0-9+.-]*:\/\/[^\s/?#@:]*):[^\s/?#]*@/gi;
const SECRET_QUERY =
  /([?&;](?:[a-z0-9_.-]*(?:token|key|secret|password|passwd|pwd|signature|sig|auth|credential)[a-z0-9_.-]*)=)[^&#\s"']*/gi;
/** `--token X`, `--api-key=X`, `--db-password X`: a long flag whose name ends in a secret word. */
const SECRET_FLAG = new RegExp(`(--(?:[a-z0-9]+[-_])*(?:${SECRET_WORDS}))(=|\\s+)(?!-)[^\\s"']+`, "gi");
const AUTH_SCHEME = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/g;
const KEY_FORMATS =
  /\b(?:sk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}|[sr]k_(?:live|test)_[A-Za-z0-9]{10,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{30,})/g;

/** `text` with every secret it visibly carries replaced by `****`. */
export function maskSecrets(text: string): string {
  return text
    .replace(URL_PASSWORD, `$1:${MASK}@`)
    .replace(SECRET_QUERY, `$1${MASK}`)
    .replace(SECRET_FLAG, `$1$2${MASK}`)
    .replace(AUTH_SCHEME, `$1 ${MASK}`)
    .replace(KEY_FORMATS, MASK);
}

/** `credentials`, `dbPassword`, `api_key`, `pw`, `pass`, `client-secret`: a key whose value is a secret. */
export function isSecretKey(key: string): boolean {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  const last = words.at(-1);
  if (last === undefined) return false;
  const joined = words.join("_");
  if (/(^|_)(api|access|private|secret|session|signing|encryption|master)_?key$/.test(joined)) return true;
  return /^(token|secret|secrets|password|passwd|passphrase|pass|pwd|pw|credential|credentials|creds|auth|authorization|cookie|cookies|apikey)$/.test(
    last,
  );
}

/** A `${NAME}` reference, expanded at run time: it names a secret, it is not one. */
export function isReference(value: unknown): boolean {
  return typeof value === "string" && /^\$\{[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?\}$/.test(value);
}

/**
 * A copy of a configuration value with its secrets masked: strings by shape (`maskSecrets`),
 * every value under a secret-looking key and everything below it, every value of an `env` or
 * `headers` map, and in an argument list the value after a flag that names a secret
 * (`["--token", "X"]`). `${VAR}` references are kept: they say where a secret comes from.
 */
export function maskValue(value: unknown, key = "", secret = false): unknown {
  const hidden = secret || isSecretKey(key);
  if (typeof value === "string") return hidden && !isReference(value) ? MASK : maskSecrets(value);
  if (Array.isArray(value)) {
    return value.map((item, i) => {
      const flag = i > 0 ? value[i - 1] : undefined;
      const afterSecretFlag = typeof flag === "string" && /^--?[A-Za-z0-9_-]+$/.test(flag) && isSecretKey(flag);
      return maskValue(item, key, hidden || afterSecretFlag);
    });
  }
  if (value === null || typeof value !== "object") {
    return hidden && value !== null && typeof value !== "boolean" ? MASK : value;
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = maskValue(v, k, hidden || k === "env" || k === "headers");
  }
  return out;
}
