import { realpathSync } from "node:fs";
import path from "node:path";

/**
 * The input, and the same with its path resolved through symbolic links: a rule names the file,
 * not a link to it. A file that does not exist yet (a Write creating it) resolves through its
 * folder, so a link to a denied folder does not open a way to write into it.
 */
export function withRealPath(input: unknown): unknown[] {
  const fields = (typeof input === "object" && input !== null ? input : {}) as Record<string, unknown>;
  const key = typeof fields.file_path === "string" ? "file_path" : typeof fields.path === "string" ? "path" : undefined;
  if (key === undefined) return [input];
  const given = fields[key] as string;
  const real = realPath(given);
  return real === undefined || real === given ? [input] : [input, { ...fields, [key]: real }];
}

function realPath(file: string): string | undefined {
  try {
    return realpathSync(file);
  } catch {
    try {
      return path.join(realpathSync(path.dirname(file)), path.basename(file));
    } catch {
      return undefined;
    }
  }
}
