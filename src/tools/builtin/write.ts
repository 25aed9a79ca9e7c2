import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import type { Tool } from "../types.js";
import { assertRegularFileOrMissing, asToolError, readExistingText, resolvePath } from "./fs-util.js";

export const WriteInputSchema = z.object({
  file_path: z.string().min(1).describe("The absolute path to the file to write (overwritten if it exists)"),
  content: z.string().describe("The content to write to the file"),
});
export type WriteInput = z.infer<typeof WriteInputSchema>;

/** Claude Code's Write result; `originalFile` is null when the file was created. */
export interface WriteOutput {
  readonly type: "create" | "update";
  readonly filePath: string;
  readonly content: string;
  readonly originalFile: string | null;
  /** Claude Code's diff hunks; a created file has none (an update's are not computed here). */
  readonly structuredPatch?: readonly [];
  /** Claude Code's: whether the user changed the content before it was written (never, here). */
  readonly userModified: false;
}

export function createWriteTool(): Tool<WriteInput, WriteOutput> {
  return {
    name: "Write",
    description:
      "Writes a file to the local filesystem, replacing it if it exists and creating missing parent directories. " +
      "Prefer Edit for changing part of an existing file.",
    inputSchema: WriteInputSchema,
    parallel: false,
    normalizeInput: (input, ctx) => ({ ...input, file_path: resolvePath(input.file_path, ctx.cwd) }),
    async execute(input, ctx) {
      const file = resolvePath(input.file_path, ctx.cwd);
      try {
        await assertRegularFileOrMissing(file);
        const originalFile = await readExistingText(file, ctx.signal, true);
        await mkdir(path.dirname(file), { recursive: true });
        // Plain writeFile (not write-then-rename) keeps the file's mode, owner and any symlink in place.
        await writeFile(file, input.content, { encoding: "utf8", signal: ctx.signal });
        return {
          type: originalFile === null ? "create" : "update",
          filePath: file,
          content: input.content,
          ...(originalFile === null ? { structuredPatch: [] as const } : {}),
          originalFile,
          userModified: false,
        };
      } catch (err) {
        throw asToolError(err, file);
      }
    },
    toModelOutput: (output) =>
      output.type === "create"
        ? `File created successfully at: ${output.filePath} (file state is current in your context — no need to Read it back)`
        : `The file ${output.filePath} has been updated.`,
  };
}
