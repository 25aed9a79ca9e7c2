import { writeFile } from "node:fs/promises";
import { z } from "zod";
import { type Tool, ToolError } from "../types.js";
import { countOccurrences } from "./edit.js";
import { assertRegularFileOrMissing, asToolError, readExistingText, resolvePath } from "./fs-util.js";

/** Claude Code's MultiEdit: several Edit-style replacements in one file, applied in order, all or none. */
export const MultiEditInputSchema = z.object({
  file_path: z.string().min(1).describe("The absolute path to the file to modify"),
  edits: z
    .array(
      z.object({
        old_string: z.string().describe("The exact text to replace"),
        new_string: z.string().describe("The text to replace it with"),
        replace_all: z.boolean().optional().describe("Replace every occurrence of old_string (default false)"),
      }),
    )
    .min(1)
    .describe("Edits applied in order, each to the result of the one before"),
});
export type MultiEditInput = z.infer<typeof MultiEditInputSchema>;

export interface MultiEditOutput {
  readonly filePath: string;
  readonly edits: MultiEditInput["edits"];
  /** The file before the edits; "" when the first edit (an empty old_string) created it. */
  readonly originalFile: string;
}

export function createMultiEditTool(): Tool<MultiEditInput, MultiEditOutput> {
  return {
    name: "MultiEdit",
    description:
      "Makes several exact string replacements in one file, in order, each applied to the result of the previous " +
      "one. Each old_string must occur exactly once unless its replace_all is true. Either every edit applies or " +
      "the file is left unchanged. An empty old_string in the first edit creates a new file.",
    inputSchema: MultiEditInputSchema,
    parallel: false,
    normalizeInput: (input, ctx) => ({ ...input, file_path: resolvePath(input.file_path, ctx.cwd) }),
    async execute(input, ctx) {
      const file = resolvePath(input.file_path, ctx.cwd);
      try {
        await assertRegularFileOrMissing(file);
        const creates = input.edits[0]?.old_string === "";
        const original = await readExistingText(file, ctx.signal, creates);
        if (original?.includes("\0")) throw new ToolError(`Cannot edit ${file}: it is a binary file`);
        if (creates && original !== null && original !== "")
          throw new ToolError(`Cannot create ${file}: the file already exists and is not empty.`);
        let text = original ?? "";
        input.edits.forEach((edit, i) => {
          const which = `edit ${i + 1}`;
          if (edit.old_string === edit.new_string)
            throw new ToolError(`${which}: old_string and new_string are exactly the same.`);
          if (edit.old_string === "") {
            if (i > 0) throw new ToolError(`${which}: only the first edit may have an empty old_string.`);
            text = edit.new_string;
            return;
          }
          const count = countOccurrences(text, edit.old_string);
          if (count === 0) throw new ToolError(`${which}: old_string not found in ${file}`);
          if (count > 1 && !edit.replace_all)
            throw new ToolError(
              `${which}: found ${count} matches of old_string in ${file}, but replace_all is false. Include more context to make it unique, or set replace_all.`,
            );
          text = text.split(edit.old_string).join(edit.new_string);
        });
        await writeFile(file, text, { encoding: "utf8", flag: original === null ? "wx" : "w", signal: ctx.signal });
        return { filePath: file, edits: input.edits, originalFile: original ?? "" };
      } catch (err) {
        throw asToolError(err, file);
      }
    },
    toModelOutput: (output) =>
      `Applied ${output.edits.length} edit${output.edits.length === 1 ? "" : "s"} to ${output.filePath}.`,
  };
}
