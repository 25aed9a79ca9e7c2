import type { Tool } from "../types.js";
import { type BashOptions, createBashTool } from "./bash.js";
import { createEditTool } from "./edit.js";
import { createGlobTool, type GlobOptions } from "./glob.js";
import { createGrepTool, type GrepOptions } from "./grep.js";
import { createMultiEditTool } from "./multi-edit.js";
import { createNotebookEditTool } from "./notebook-edit.js";
import { createReadTool, type ReadOptions } from "./read.js";
import { createTodoWriteTool } from "./todo-write.js";
import { createWebFetchTool, type WebFetchOptions } from "./web-fetch.js";
import { createWriteTool } from "./write.js";

export * from "./bash.js";
export * from "./edit.js";
export * from "./glob.js";
export * from "./grep.js";
export * from "./multi-edit.js";
export * from "./notebook-edit.js";
export * from "./read.js";
export * from "./todo-write.js";
export * from "./web-fetch.js";
export * from "./write.js";

export interface BuiltinToolOptions {
  readonly read?: ReadOptions;
  readonly bash?: BashOptions;
  readonly glob?: GlobOptions;
  readonly grep?: GrepOptions;
  /** WebFetch is offered only when given: a tool that reaches the network is the operator's choice. */
  readonly webFetch?: WebFetchOptions;
}

/**
 * The built-in tools with Claude Code's names and input shapes. (`Agent` lives with the runtime,
 * which it needs to start child runs.)
 */
export function builtinTools(options: BuiltinToolOptions = {}): Tool[] {
  return [
    createReadTool(options.read),
    createWriteTool(),
    createEditTool(),
    createMultiEditTool(),
    createNotebookEditTool(),
    createBashTool(options.bash),
    createGlobTool(options.glob),
    createGrepTool(options.grep),
    createTodoWriteTool(),
    ...(options.webFetch ? [createWebFetchTool(options.webFetch)] : []),
  ];
}
