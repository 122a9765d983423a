// A tool server in process, connected to the MCP SDK's own Client over a linked in-memory pair,
// talking to a real ledger service through the client; and helpers to read tool answers.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { LedgerClient } from '../../src/client/index.ts';
import { createKeyFile, createLedgerMcpServer, mcpContext } from '../../src/mcp/index.ts';
import type { Served } from '../client/support.ts';

export type Agent = { handle: string; secret: string; keyFile: string };

/** An agent with a signing key file registered on the service. */
export async function agentWithKeyFile(s: Served): Promise<Agent> {
  const { handle, secret } = await s.agent();
  const keyFile = join(mkdtempSync(join(tmpdir(), 'ledger-mcp-')), 'key.json');
  await createKeyFile(keyFile, { client: new LedgerClient({ baseUrl: s.baseUrl, apiKey: secret }), agent: handle, label: 'mcp test' });
  return { handle, secret, keyFile };
}

export async function inProcess(config: { baseUrl: string; apiKey?: string; keyFile?: string }): Promise<{ mcp: Client; close: () => Promise<void> }> {
  const server = createLedgerMcpServer(await mcpContext(config));
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const mcp = new Client({ name: 'ledger-test', version: '1.0.0' });
  await mcp.connect(clientSide);
  return { mcp, close: async () => { await mcp.close(); await server.close(); } };
}

export type ToolError = { code: string; message: string; param?: string; status: number; request_id?: string; type: string };

/** The structured answer of a successful call (fails the test on a tool error). */
export function ok(result: unknown): Record<string, unknown> {
  const r = result as CallToolResult;
  if (r.isError) throw new Error(`tool error: ${JSON.stringify(r.structuredContent)}`);
  const text = (r.content[0] as { text: string }).text;
  const parsed = JSON.parse(text) as Record<string, unknown>;
  return (r.structuredContent as Record<string, unknown>) ?? parsed;
}

/** The error body of a tool error (fails the test on a success), read from the text content a model sees. */
export function toolError(result: unknown): ToolError {
  const r = result as CallToolResult;
  if (!r.isError) throw new Error(`expected a tool error, got ${JSON.stringify(r.structuredContent)}`);
  return (JSON.parse((r.content[0] as { text: string }).text) as { error: ToolError }).error;
}
