import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { ApiKeyRecord, ServiceRecords } from "./records.js";

/**
 * Bearer API keys: `ghk_<id>_<secret>`. Only sha256(secret) is stored; the id finds the
 * record, and the hashes are compared in constant time. A secret of 32 random bytes needs no
 * slow hash: nothing about it can be guessed from its digest.
 */
const KEY = /^ghk_([a-f0-9]{16})_([A-Za-z0-9_-]{43})$/;

export interface CreatedKey extends ApiKeyRecord {
  /** The whole key: shown once, never stored. */
  readonly key: string;
}

export function hashSecret(secret: string): Buffer {
  return createHash("sha256").update(secret, "utf8").digest();
}

export async function createApiKey(
  records: ServiceRecords,
  principal: string,
  name: string | null,
  options: { readonly admin?: boolean; readonly now?: Date } = {},
): Promise<CreatedKey> {
  const id = randomBytes(8).toString("hex");
  const secret = randomBytes(32).toString("base64url");
  const record = {
    id,
    principal,
    name,
    admin: options.admin === true,
    createdAt: (options.now ?? new Date()).toISOString(),
    revokedAt: null,
  };
  await records.createApiKey({ ...record, hash: hashSecret(secret).toString("hex") });
  return { ...record, key: `ghk_${id}_${secret}` };
}

// Compared against when the id is unknown, so a wrong id costs what a wrong secret costs.
const DECOY = hashSecret("gatehouse: no such key");

/** Who a request acts for. */
export interface Identity {
  readonly principal: string;
  /** Reads every session and answers any run's approval asks. */
  readonly admin: boolean;
  /** The key it presented (or logged in with); null for the open loopback's local principal. */
  readonly keyId: string | null;
}

/** Who a bearer key stands for, or undefined (unknown, revoked, malformed). */
export async function identityOf(records: ServiceRecords, bearer: string): Promise<Identity | undefined> {
  const match = KEY.exec(bearer);
  const presented = hashSecret(match?.[2] ?? bearer);
  const record = match ? await records.findApiKey(match[1] as string) : undefined;
  const stored = record ? Buffer.from(record.hash, "hex") : DECOY;
  const same = stored.length === presented.length && timingSafeEqual(stored, presented);
  return same && record && record.revokedAt === null
    ? { principal: record.principal, admin: record.admin, keyId: record.id }
    : undefined;
}
