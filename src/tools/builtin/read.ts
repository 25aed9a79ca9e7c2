import { createReadStream } from "node:fs";
import { open, stat } from "node:fs/promises";
import { createInterface } from "node:readline";
import { z } from "zod";
import { type Tool, ToolError } from "../types.js";
import { asToolError, resolvePath, sniffBinary } from "./fs-util.js";

export const ReadInputSchema = z.object({
  file_path: z.string().min(1).describe("The absolute path to the file to read"),
  offset: z
    .number()
    .int()
    .nonnegative()
    .optional()
    .describe("The line number to start reading from (1-based). Only provide if the file is too large to read at once"),
  limit: z
    .number()
    .int()
    .positive()
    .optional()
    .describe("The number of lines to read. Only provide if the file is too large to read at once."),
});
export type ReadInput = z.infer<typeof ReadInputSchema>;

/** Claude Code's Read result (`tool_response`): the raw lines; line numbers are added for the model only. */
export interface ReadOutput {
  readonly type: "text";
  readonly file: {
    readonly filePath: string;
    readonly content: string;
    readonly numLines: number;
    readonly startLine: number;
    readonly totalLines: number;
  };
}

export interface ReadOptions {
  /** A whole-file read (no offset/limit) of a larger file is refused; ranges of any size stream. */
  readonly maxFileBytes?: number;
  readonly defaultLimit?: number;
  readonly maxLineLength?: number;
}

export const READ_DEFAULTS = { maxFileBytes: 256 * 1024, defaultLimit: 2000, maxLineLength: 2000 } as const;

/** As Claude Code (2.1.328) shows a file to the model: the line's number, a tab, the line. */
export function numberLines(content: string, startLine: number): string {
  return content
    .split("\n")
    .map((line, i) => `${startLine + i}\t${line}`)
    .join("\n");
}

export function createReadTool(options: ReadOptions = {}): Tool<ReadInput, ReadOutput> {
  const { maxFileBytes, defaultLimit, maxLineLength } = { ...READ_DEFAULTS, ...options };
  return {
    name: "Read",
    description:
      "Reads a text file from the local filesystem. Returns up to " +
      `${defaultLimit} lines by default, each after its number and a tab, starting at 1; lines longer than ` +
      `${maxLineLength} characters are truncated. Use offset and limit for large files. Binary files and ` +
      "directories cannot be read.",
    inputSchema: ReadInputSchema,
    parallel: true,
    normalizeInput: (input, ctx) => ({ ...input, file_path: resolvePath(input.file_path, ctx.cwd) }),
    async execute(input, ctx) {
      const file = resolvePath(input.file_path, ctx.cwd);
      const startLine = Math.max(1, input.offset ?? 1);
      const limit = input.limit ?? defaultLimit;
      try {
        // stat before open: opening a FIFO would block until some writer appears.
        const info = await stat(file);
        if (info.isDirectory())
          throw new ToolError(`${file} is a directory, not a file; use Glob or Bash ls to list it`);
        if (!info.isFile()) throw new ToolError(`${file} is not a regular file`);
        const ranged = input.offset !== undefined || input.limit !== undefined;
        if (!ranged && info.size > maxFileBytes) {
          throw new ToolError(
            `File content (${formatKiB(info.size)}) exceeds the maximum allowed size (${formatKiB(maxFileBytes)}). ` +
              "Use offset and limit to read specific portions of the file, or Grep to search for specific content.",
          );
        }
        if (await sniffBinary(file)) throw binaryError(file);
        const { lines, totalLines } = await readLineRange(file, info.size, startLine - 1, limit, ctx.signal);
        const clipped = lines.map((line) => {
          if (line.includes("\0")) throw binaryError(file);
          return line.length > maxLineLength ? `${line.slice(0, maxLineLength)}… [line truncated]` : line;
        });
        return {
          type: "text",
          file: { filePath: file, content: clipped.join("\n"), numLines: clipped.length, startLine, totalLines },
        };
      } catch (err) {
        throw asToolError(err, file);
      }
    },
    toModelOutput(output) {
      const { content, numLines, startLine, totalLines } = output.file;
      if (totalLines === 0) return "(the file exists but is empty)";
      if (numLines === 0) return `(the file has ${totalLines} lines; offset ${startLine} is past its end)`;
      const shown = numberLines(content, startLine);
      const last = startLine + numLines - 1;
      return last < totalLines ? `${shown}\n(showing lines ${startLine}-${last} of ${totalLines})` : shown;
    },
  };
}

function binaryError(file: string): ToolError {
  return new ToolError(`Cannot read ${file}: it is a binary file (contains NUL bytes)`);
}

function formatKiB(bytes: number): string {
  return `${Math.ceil(bytes / 1024)} KiB`;
}

/**
 * Streams the file so a range of a huge file costs memory for the range only; it still reads to
 * the end to report `totalLines` as Claude Code does.
 */
async function readLineRange(
  file: string,
  size: number,
  skip: number,
  limit: number,
  signal: AbortSignal,
): Promise<{ lines: string[]; totalLines: number }> {
  const lines: string[] = [];
  let totalLines = 0;
  const stream = createReadStream(file, { encoding: "utf8", signal });
  const reader = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
  for await (const line of reader) {
    if (totalLines >= skip && lines.length < limit) lines.push(line);
    totalLines++;
  }
  // As Claude Code counts: a final newline ends one more, empty, line ("a\n" is "a" and "").
  if (size > 0 && (await lastByte(file, size)) === 0x0a) {
    if (totalLines >= skip && lines.length < limit) lines.push("");
    totalLines++;
  }
  return { lines, totalLines };
}

async function lastByte(file: string, size: number): Promise<number | undefined> {
  const handle = await open(file, "r");
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(1), 0, 1, size - 1);
    return bytesRead === 1 ? buffer[0] : undefined;
  } finally {
    await handle.close();
  }
}
