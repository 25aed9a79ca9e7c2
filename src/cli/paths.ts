import { isAbsolute, relative } from "node:path";

/** Where a diagnostic's file is shown: relative when inside the project, else as it is. */
export function projectRelative(cwd: string, file: string): string {
  if (!isAbsolute(file)) return file;
  const rel = relative(cwd, file);
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel) ? rel : file;
}
