import { randomUUID } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { z } from "zod";
import { type Tool, ToolError } from "../types.js";
import { asToolError, resolvePath } from "./fs-util.js";

/** Claude Code's NotebookEdit: replace, insert or delete one cell of a Jupyter notebook (.ipynb). */
export const NotebookEditInputSchema = z.object({
  notebook_path: z.string().min(1).describe("The absolute path to the .ipynb file"),
  cell_id: z
    .string()
    .optional()
    .describe("The cell to edit (its id, or cell-N for the N-th, from 0); insert puts the new cell after it"),
  new_source: z.string().describe("The new source of the cell"),
  cell_type: z.enum(["code", "markdown"]).optional().describe("The cell's type; required for insert"),
  edit_mode: z.enum(["replace", "insert", "delete"]).optional().describe("Default replace"),
});
export type NotebookEditInput = z.infer<typeof NotebookEditInputSchema>;

export interface NotebookEditOutput {
  readonly new_source: string;
  readonly cell_id: string | undefined;
  readonly cell_type: "code" | "markdown";
  readonly language: string;
  readonly edit_mode: "replace" | "insert" | "delete";
}

interface Cell {
  id?: string;
  cell_type: string;
  source: string | string[];
  metadata?: Record<string, unknown>;
  outputs?: unknown[];
  execution_count?: number | null;
}

interface Notebook {
  cells: Cell[];
  metadata?: { language_info?: { name?: string } };
  nbformat?: number;
  nbformat_minor?: number;
}

export function createNotebookEditTool(): Tool<NotebookEditInput, NotebookEditOutput> {
  return {
    name: "NotebookEdit",
    description:
      "Replaces, inserts or deletes one cell of a Jupyter notebook (.ipynb). cell_id names the cell (its id, or " +
      "cell-N); insert adds a cell after it (at the start without one) and needs cell_type.",
    inputSchema: NotebookEditInputSchema,
    parallel: false,
    normalizeInput: (input, ctx) => ({ ...input, notebook_path: resolvePath(input.notebook_path, ctx.cwd) }),
    async execute(input, ctx) {
      const file = resolvePath(input.notebook_path, ctx.cwd);
      const mode = input.edit_mode ?? "replace";
      if (!file.endsWith(".ipynb")) throw new ToolError(`${file} is not a notebook (.ipynb)`);
      try {
        const notebook = JSON.parse(await readFile(file, { encoding: "utf8", signal: ctx.signal })) as Notebook;
        if (!Array.isArray(notebook.cells)) throw new ToolError(`${file} has no cells: not a Jupyter notebook`);
        const index = input.cell_id === undefined ? -1 : cellIndex(notebook.cells, input.cell_id);
        if (input.cell_id !== undefined && index < 0) throw new ToolError(`No cell "${input.cell_id}" in ${file}`);
        const language = notebook.metadata?.language_info?.name ?? "python";
        let cellType: "code" | "markdown";
        let cellId = input.cell_id;
        if (mode === "insert") {
          if (input.cell_type === undefined) throw new ToolError("cell_type is required to insert a cell");
          cellType = input.cell_type;
          const cell: Cell = { cell_type: cellType, source: input.new_source, metadata: {} };
          if ((notebook.nbformat ?? 4) > 4 || ((notebook.nbformat ?? 4) === 4 && (notebook.nbformat_minor ?? 0) >= 5))
            cell.id = randomUUID().slice(0, 8);
          if (cellType === "code") Object.assign(cell, { outputs: [], execution_count: null });
          notebook.cells.splice(index + 1, 0, cell);
          cellId = cell.id ?? `cell-${index + 1}`;
        } else {
          const at = Math.max(index, 0);
          const cell = notebook.cells[at];
          if (!cell) throw new ToolError(`${file} has no cell to ${mode}`);
          cellType = (input.cell_type ?? cell.cell_type) === "markdown" ? "markdown" : "code";
          if (mode === "delete") notebook.cells.splice(at, 1);
          else {
            cell.source = input.new_source;
            cell.cell_type = cellType;
            // A changed code cell's old outputs no longer describe it.
            if (cellType === "code") Object.assign(cell, { outputs: [], execution_count: null });
            else {
              delete cell.outputs;
              delete cell.execution_count;
            }
          }
        }
        await writeFile(file, `${JSON.stringify(notebook, null, 1)}\n`, { encoding: "utf8", signal: ctx.signal });
        return { new_source: input.new_source, cell_id: cellId, cell_type: cellType, language, edit_mode: mode };
      } catch (err) {
        if (err instanceof SyntaxError) throw new ToolError(`${file} is not valid JSON: not a Jupyter notebook`);
        throw asToolError(err, file);
      }
    },
    toModelOutput: (o) =>
      o.edit_mode === "delete"
        ? `Deleted cell ${o.cell_id}`
        : o.edit_mode === "insert"
          ? `Inserted cell ${o.cell_id} with ${o.new_source}`
          : `Updated cell ${o.cell_id ?? "0"} with ${o.new_source}`,
  };
}

function cellIndex(cells: readonly Cell[], id: string): number {
  const byId = cells.findIndex((c) => c.id === id);
  if (byId >= 0) return byId;
  const n = /^cell-(\d+)$/.exec(id);
  return n && Number(n[1]) < cells.length ? Number(n[1]) : -1;
}
