// An MCP server with many tools, for the gateway bench's tools/list figure. Built on the official
// TypeScript SDK installed in peers/. Usage: node many_tools.mjs <sdk path> <prefix> <count>
import { pathToFileURL } from "node:url";

const [sdk, prefix, count] = process.argv.slice(2);
const load = (p) => import(pathToFileURL(`${sdk}/dist/esm/${p}`).href);
const { Server } = await load("server/index.js");
const { StdioServerTransport } = await load("server/stdio.js");
const { ListToolsRequestSchema, CallToolRequestSchema } = await load("types.js");

const verbs = ["list", "get", "search", "create", "update", "delete", "send"];
const tools = Array.from({ length: Number(count) }, (_, i) => {
  const verb = verbs[i % verbs.length];
  return {
    name: `${prefix}_${verb}_item_${i}`,
    description: `${verb[0].toUpperCase()}${verb.slice(1)} item number ${i} of the ${prefix} service.`,
    inputSchema: { type: "object", properties: { id: { type: "string" } } },
  };
});

const server = new Server({ name: `many-${prefix}`, version: "1.0.0" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
server.setRequestHandler(CallToolRequestSchema, async () => ({ content: [{ type: "text", text: "ok" }] }));
await server.connect(new StdioServerTransport());
