// Handlers on tool hooks registered with one built-in tool's name as their matcher see that tool's
// input typed: `api.on("before_tool_call", (e) => e.params.command, { matcher: "Bash" })`. The
// runtime checks a call's input against the tool's schema before any tool hook sees it, so the
// type holds (for the built-in tools; a name a library user gives another tool is not covered).
import type { HookName } from "../hooks/catalog.js";
import type { HandlerEvent, HandlerReturn, HookContext } from "../hooks/types.js";
import type { BashInput } from "../tools/builtin/bash.js";
import type { EditInput } from "../tools/builtin/edit.js";
import type { GlobInput } from "../tools/builtin/glob.js";
import type { GrepInput } from "../tools/builtin/grep.js";
import type { MultiEditInput } from "../tools/builtin/multi-edit.js";
import type { NotebookEditInput } from "../tools/builtin/notebook-edit.js";
import type { ReadInput } from "../tools/builtin/read.js";
import type { TodoWriteInput } from "../tools/builtin/todo-write.js";
import type { WebFetchInput } from "../tools/builtin/web-fetch.js";
import type { WriteInput } from "../tools/builtin/write.js";

/** The built-in tools' inputs, by tool name. */
export interface BuiltinToolParams {
  Bash: BashInput;
  Read: ReadInput;
  Write: WriteInput;
  Edit: EditInput;
  MultiEdit: MultiEditInput;
  NotebookEdit: NotebookEditInput;
  Glob: GlobInput;
  Grep: GrepInput;
  TodoWrite: TodoWriteInput;
  WebFetch: WebFetchInput;
}
export type BuiltinToolName = keyof BuiltinToolParams;

/** The hooks whose event carries a tool call's `toolName` and `params`. */
export type ToolParamsHook = Extract<
  HookName,
  "before_tool_call" | "after_tool_call" | "permission_request" | "permission_denied"
>;

/** A tool hook's event for calls of tool `T`. */
export type ToolHandlerEvent<K extends ToolParamsHook, T extends BuiltinToolName> = Omit<
  HandlerEvent<K>,
  "toolName" | "params"
> & { readonly toolName: T; readonly params: Readonly<BuiltinToolParams[T]> };

export type ToolHookHandler<K extends ToolParamsHook, T extends BuiltinToolName> = (
  event: ToolHandlerEvent<K, T>,
  ctx: HookContext,
) => HandlerReturn<K>;
