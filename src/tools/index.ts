export * from "./builtin/index.js";
export * from "./mcp.js";
export * from "./select.js";
export * from "./types.js";
