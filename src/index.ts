export * from "./core/message.js";
export type { Tool, ToolContext } from "./tools/types.js";
export { ToolError } from "./tools/types.js";
export { VERSION } from "./version.js";
