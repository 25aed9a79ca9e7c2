import { writeFile } from "node:fs/promises";
import { z } from "zod";
import { type Tool, ToolError } from "../types.js";
import { assertRegularFileOrMissing, asToolError, readExistingText, resolvePath } from "./fs-util.js";

export const EditInputSchema = z.object({
  file_path: z.string().min(1).describe("The absolute path to the file to modify"),
  old_string: z.string().describe("The exact text to replace (must occur exactly once unless replace_all is set)"),
  new_string: z.string().describe("The text to replace it with (must be different from old_string)"),
  replace_all: z.boolean().optional().describe("Replace every occurrence of old_string (default false)"),
});
export type EditInput = z.infer<typeof EditInputSchema>;

/** Claude Code's Edit result, without `structuredPatch` (no diff library in the dependency set). */
export interface EditOutput {
  readonly filePath: string;
  readonly oldString: string;
  readonly newString: string;
  /** The file before the edit; "" when an empty old_string created it. */
  readonly originalFile: string;
  readonly replaceAll: boolean;
  readonly replacements: number;
}

export function createEditTool(): Tool<EditInput, EditOutput> {
  return {
    name: "Edit",
    description:
      "Performs an exact string replacement in a file. old_string must match the file's text exactly (whitespace " +
      "included) and occur once, unless replace_all is true. An empty old_string creates a new file with new_string.",
    inputSchema: EditInputSchema,
    parallel: false,
    // As Claude Code fills it in: hooks read `replace_all: false` when the model left it out.
    normalizeInput: (input, ctx) => ({
      ...input,
      file_path: resolvePath(input.file_path, ctx.cwd),
      replace_all: input.replace_all ?? false,
    }),
    async execute(input, ctx) {
      const file = resolvePath(input.file_path, ctx.cwd);
      const { old_string: oldString, new_string: newString } = input;
      const replaceAll = input.replace_all ?? false;
      if (oldString === newString) {
        throw new ToolError("No changes to make: old_string and new_string are exactly the same.");
      }
      try {
        await assertRegularFileOrMissing(file);
        // Claude Code's convention: an empty old_string on a missing file creates it.
        const original = await readExistingText(file, ctx.signal, oldString === "");
        if (original === null) {
          await writeFile(file, newString, { encoding: "utf8", flag: "wx", signal: ctx.signal });
          return { filePath: file, oldString, newString, originalFile: "", replaceAll, replacements: 1 };
        }
        if (original.includes("\0")) throw new ToolError(`Cannot edit ${file}: it is a binary file`);
        if (oldString === "") {
          if (original !== "") throw new ToolError(`Cannot create ${file}: the file already exists and is not empty.`);
          await writeFile(file, newString, { encoding: "utf8", signal: ctx.signal });
          return { filePath: file, oldString, newString, originalFile: original, replaceAll, replacements: 1 };
        }
        const count = countOccurrences(original, oldString);
        if (count === 0) throw new ToolError(`old_string not found in ${file}`);
        if (count > 1 && !replaceAll) {
          throw new ToolError(
            `Found ${count} matches of old_string in ${file}, but replace_all is false. To replace all of them set ` +
              "replace_all to true; to replace one, include more surrounding context so that it is unique.",
          );
        }
        // split/join instead of String.replace: "$&" and friends in new_string must stay literal.
        const updated = original.split(oldString).join(newString);
        await writeFile(file, updated, { encoding: "utf8", signal: ctx.signal });
        return { filePath: file, oldString, newString, originalFile: original, replaceAll, replacements: count };
      } catch (err) {
        throw asToolError(err, file);
      }
    },
    toModelOutput: (output) =>
      output.originalFile === "" && output.oldString === ""
        ? `File created successfully at: ${output.filePath}`
        : `The file ${output.filePath} has been updated (${output.replacements} replacement${output.replacements === 1 ? "" : "s"}).`,
  };
}

/** Non-overlapping occurrences, the same ones split() replaces. */
export function countOccurrences(haystack: string, needle: string): number {
  let count = 0;
  for (let i = haystack.indexOf(needle); i !== -1; i = haystack.indexOf(needle, i + needle.length)) count++;
  return count;
}
