export { mcpPlugin, MCP_PATH, MCP_WS_PATH, WS_SUBPROTOCOLS } from './plugin';
export type { McpOptions, McpPluginOptions } from './plugin';
export { createMcpServer } from './server';
export type { McpServerDeps } from './server';
export { WebSocketServerTransport } from './ws-transport';
