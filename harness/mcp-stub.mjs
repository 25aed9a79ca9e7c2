// The smallest MCP stdio server R6 needs: one tool. Plain .mjs so it starts without tsx.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";

const server = new McpServer({ name: "r6", version: "1.0.0" });
server.registerTool("ping", { description: "Answers pong" }, async () => ({
  content: [{ type: "text", text: "pong" }],
}));
await server.connect(new StdioServerTransport());
