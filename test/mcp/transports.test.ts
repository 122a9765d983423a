// The tool server over its two real transports, through the MCP SDK's own clients, against a
// real ledger on both stores: Streamable HTTP (listing, a signed record, an invalid argument as a
// tool error, Host and Origin checks, the token rule off loopback), and stdio by running the
// `ledger mcp` command itself.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { mcpContext, serveHttp, type HttpServing } from '../../src/mcp/index.ts';
import { forEachStore } from '../support/stores.ts';
import { closeTestApp } from '../support/app.ts';
import { DECISION, serve, type Served } from '../client/support.ts';
import { agentWithKeyFile, ok, toolError, type Agent } from './support.ts';

const LEDGER_BIN = fileURLToPath(new URL('../../bin/ledger.js', import.meta.url));

await forEachStore('ledger mcp transports', (kind) => {
  let s: Served;
  let agent: Agent;
  let http: HttpServing;

  before(async () => {
    s = await serve(kind);
    agent = await agentWithKeyFile(s);
    http = await serveHttp(await mcpContext({ baseUrl: s.baseUrl, apiKey: agent.secret, keyFile: agent.keyFile }));
  });
  after(async () => {
    await http?.close();
    await closeTestApp(s, kind);
  });

  test('Streamable HTTP: tools listed and called, an invalid argument named', async () => {
    const mcp = new Client({ name: 'http-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(http.url)));
    try {
      assert.equal((await mcp.listTools()).tools.length, 6);
      const r = ok(await mcp.callTool({ name: 'record_decision', arguments: DECISION }));
      assert.equal((r.verification as { agent_signed: boolean }).agent_signed, true);
      const v = ok(await mcp.callTool({ name: 'get_proof', arguments: { record_id: r.id } }));
      assert.equal((v.verification as { ok: boolean }).ok, true);
      const e = toolError(await mcp.callTool({ name: 'record_decision', arguments: { ...DECISION, quantity: { amount: 1 } } }));
      assert.deepEqual([e.code, e.param], ['invalid_request', 'quantity']);
    } finally {
      await mcp.close();
    }
  });

  test('Streamable HTTP refuses a foreign Host or Origin, and serving off loopback needs a token', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const { port } = new URL(http.url);
    const raw = (extra: Record<string, string>) => new Promise<number>((resolve, reject) => {
      // node:http, because fetch will not send a Host header of our choosing.
      import('node:http').then(({ request }) => {
        const req = request({ host: '127.0.0.1', port, path: '/mcp', method: 'POST', headers: { ...headers, ...extra } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end(body);
      }, reject);
    });
    assert.equal(await raw({}), 200);
    assert.equal(await raw({ host: 'attacker.example' }), 403);
    assert.equal(await raw({ origin: 'https://attacker.example' }), 403);
    assert.equal(await raw({ origin: `http://localhost:${port}` }), 200);
    await assert.rejects(serveHttp(await mcpContext({ baseUrl: s.baseUrl }), { host: '0.0.0.0' }), /bearer token/);
  });

  test('stdio: `ledger mcp` run as an agent host runs it', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [LEDGER_BIN, 'mcp'],
      env: { PATH: process.env.PATH ?? '', LEDGER_BASE_URL: s.baseUrl, LEDGER_API_KEY: agent.secret, LEDGER_KEY_FILE: agent.keyFile },
      stderr: 'pipe',
    });
    const mcp = new Client({ name: 'stdio-test', version: '1.0.0' });
    await mcp.connect(transport);
    try {
      assert.deepEqual((await mcp.listTools()).tools.map((t) => t.name).sort(),
        ['get_performance', 'get_proof', 'list_decisions', 'record_decision', 'search_ledger', 'verify_agent']);
      const r = ok(await mcp.callTool({ name: 'record_decision', arguments: { ...DECISION, symbol: 'MSFT' } }));
      assert.equal((r.verification as { agent_signed: boolean }).agent_signed, true);
      const v = ok(await mcp.callTool({ name: 'verify_agent', arguments: { handle: agent.handle } }));
      assert.equal(v.ok, true);
      const e = toolError(await mcp.callTool({ name: 'search_ledger', arguments: { include_demo: 'yes' } }));
      assert.deepEqual([e.code, e.param], ['invalid_request', 'include_demo']);
    } finally {
      await mcp.close();
    }
  });
});
