// How `ledger mcp` is reached: over stdio (the agent's host starts it as a child process) or over
// Streamable HTTP (stateless: each POST gets a fresh server and transport, so nothing is held
// between calls). The HTTP server binds loopback by default and refuses Host and Origin headers
// that are not its own (DNS rebinding); bound elsewhere it needs a bearer token, since whoever
// reaches it records decisions in the agent's name.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { timingSafeEqual } from 'node:crypto';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { LedgerClient } from '../client/index.ts';
import { readKeyFile } from './key-file.ts';
import { createLedgerMcpServer } from './server.ts';
import type { ToolContext } from './tools.ts';

export type McpConfig = {
  /** The ledger's API base, e.g. https://ledger.example/v1. */
  baseUrl: string;
  apiKey?: string | undefined;
  /** A signing key file (key-file.ts): record_decision signs with it. */
  keyFile?: string | undefined;
  fetch?: typeof fetch | undefined;
};

export async function mcpContext(config: McpConfig): Promise<ToolContext> {
  const client = new LedgerClient({ baseUrl: config.baseUrl, apiKey: config.apiKey, fetch: config.fetch, retry: { maxRetryAfterMs: 15_000 } });
  const signer = config.keyFile ? await readKeyFile(config.keyFile) : null;
  return { client, signer };
}

export async function serveStdio(ctx: ToolContext): Promise<() => Promise<void>> {
  const server = createLedgerMcpServer(ctx);
  await server.connect(new StdioServerTransport());
  return () => server.close();
}

export type HttpServing = { url: string; close: () => Promise<void> };

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

function jsonRpcError(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

const hostnameOf = (host: string | undefined) => (host ?? '').replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1').toLowerCase();

/** Why a request is refused before it reaches the protocol, or null. */
function refusal(req: IncomingMessage, options: { loopback: boolean; token: string | undefined }): [number, string] | null {
  if (options.loopback) {
    if (!LOOPBACK.has(hostnameOf(req.headers.host))) return [403, 'Host is not this loopback server'];
    const origin = req.headers.origin;
    if (origin !== undefined) {
      let ok = false;
      try {
        ok = LOOPBACK.has(new URL(origin).hostname.replace(/^\[(.*)\]$/, '$1'));
      } catch {
        ok = false;
      }
      if (!ok) return [403, 'Origin is not allowed'];
    }
  }
  if (options.token !== undefined) {
    const given = Buffer.from(req.headers.authorization ?? '');
    const expected = Buffer.from(`Bearer ${options.token}`);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return [401, 'a bearer token is required'];
  }
  return null;
}

export async function serveHttp(ctx: ToolContext, options: { host?: string; port?: number; path?: string; token?: string | undefined } = {}): Promise<HttpServing> {
  const host = options.host ?? '127.0.0.1';
  const path = options.path ?? '/mcp';
  const loopback = LOOPBACK.has(host);
  if (!loopback && !options.token) throw new Error(`serving MCP on ${host} (not loopback) needs a bearer token (--http-token or LEDGER_MCP_HTTP_TOKEN)`);

  const http = createServer((req, res) => {
    void handle(req, res).catch((e: unknown) => {
      if (!res.headersSent) jsonRpcError(res, 500, e instanceof Error ? e.message : String(e));
    });
  });
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (new URL(req.url ?? '/', 'http://x').pathname !== path) return jsonRpcError(res, 404, `the MCP endpoint is ${path}`);
    const refused = refusal(req, { loopback, token: options.token });
    if (refused) return jsonRpcError(res, refused[0], refused[1]);
    if (req.method !== 'POST') return jsonRpcError(res, 405, 'this server is stateless: POST only');
    const server = createLedgerMcpServer(ctx);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  }
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = http.address() as AddressInfo;
  const shown = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}${path}`,
    close: () => new Promise<void>((resolve) => {
      http.closeAllConnections();
      http.close(() => resolve());
    }),
  };
}
