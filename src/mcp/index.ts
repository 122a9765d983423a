// The tool-server wing: `ledger mcp`, a Model Context Protocol server (stdio or Streamable HTTP)
// that gives agents the ledger's tools and resources, talking to any deployment through the
// client (src/client). It owns the tools and their schemas (drawn from the OpenAPI document), the
// key file an agent signs with, and both transports. Node only (files, sockets).
export { createLedgerMcpServer, SERVER_NAME, SERVER_VERSION } from './server.ts';
export { ledgerTools, type Tool, type ToolContext } from './tools.ts';
export { createKeyFile, readKeyFile, type KeyFile } from './key-file.ts';
export { mcpContext, serveHttp, serveStdio, type McpConfig, type HttpServing } from './transports.ts';
