import { isAbsolute, relative } from "node:path";

/** A path shown relative to `cwd` when it is inside it (`plugins/a.ts`), else as it is. */
export function shownPath(cwd: string, file: string): string {
  if (!isAbsolute(file)) return file;
  const rel = relative(cwd, file);
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel) ? rel : file;
}
