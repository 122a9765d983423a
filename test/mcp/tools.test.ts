// The tool server through the MCP SDK's own Client, in process, against a real ledger on both
// stores: the tools are listed with schemas drawn from the OpenAPI document, each is called,
// an invalid argument is a tool error naming the field, the service's errors come back as tool
// errors with the spec's code, and the resources read the agent's profile and llms.txt.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { OPENAPI, operationIdAt } from '../../src/mcp/schemas.ts';
import { forEachStore } from '../support/stores.ts';
import { closeTestApp } from '../support/app.ts';
import { DECISION, serve, type Served } from '../client/support.ts';
import { agentWithKeyFile, inProcess, ok, toolError, type Agent } from './support.ts';

const TOOLS = ['record_decision', 'get_proof', 'verify_agent', 'get_performance', 'list_decisions', 'search_ledger'];

await forEachStore('ledger mcp tools', (kind) => {
  let s: Served;
  let agent: Agent;
  let signed: { mcp: Client; close: () => Promise<void> };
  let unsigned: { mcp: Client; close: () => Promise<void> };
  let recordId: string;

  before(async () => {
    s = await serve(kind);
    agent = await agentWithKeyFile(s);
    signed = await inProcess({ baseUrl: s.baseUrl, apiKey: agent.secret, keyFile: agent.keyFile });
    unsigned = await inProcess({ baseUrl: s.baseUrl, apiKey: agent.secret });
  });
  after(async () => {
    await signed?.close();
    await unsigned?.close();
    await closeTestApp(s, kind);
  });

  test('lists the six tools, each schema drawn from the API\'s', async () => {
    const { tools } = await signed.mcp.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), [...TOOLS].sort());
    const record = tools.find((t) => t.name === 'record_decision')!;
    const body = OPENAPI.paths['/v1/decisions']!.post!.requestBody!.content['application/json']!.schema as { properties: Record<string, unknown>; required: string[] };
    const props = record.inputSchema.properties as Record<string, unknown>;
    for (const field of Object.keys(body.properties).filter((f) => f !== 'signature')) assert.deepEqual(props[field], body.properties[field], field);
    assert.equal(props.signature, undefined, 'the tool signs; the agent never sends a signature');
    assert.deepEqual(record.inputSchema.required, body.required);
    const search = tools.find((t) => t.name === 'search_ledger')!;
    assert.deepEqual(Object.keys(search.inputSchema.properties!).sort(), ['agent', 'cursor', 'include_demo', 'limit', 'symbol', 'type']);
    assert.equal(search.inputSchema.required, undefined, 'every search parameter is optional');
    assert.deepEqual(tools.find((t) => t.name === 'get_proof')!.inputSchema.required, ['record_id']);
  });

  test('record_decision signs with the key file; the same idempotency_key replays', async () => {
    const r = ok(await signed.mcp.callTool({ name: 'record_decision', arguments: { ...DECISION, metadata: { source: 'mcp' } } }));
    assert.match(String(r.id), /^dec_/);
    assert.equal((r.verification as { agent_signed: boolean }).agent_signed, true);
    recordId = String(r.id);
    const again = ok(await signed.mcp.callTool({ name: 'record_decision', arguments: { ...DECISION, metadata: { source: 'mcp' }, idempotency_key: r.idempotency_key } }));
    assert.equal(again.id, r.id);
    assert.equal(again.replayed, true);
    const plain = ok(await unsigned.mcp.callTool({ name: 'record_decision', arguments: DECISION }));
    assert.equal((plain.verification as { agent_signed: boolean }).agent_signed, false);
  });

  test('get_proof answers the bundle and its verification', async () => {
    const r = ok(await signed.mcp.callTool({ name: 'get_proof', arguments: { record_id: recordId } }));
    assert.equal((r.proof as { id: string }).id, recordId);
    const v = r.verification as { ok: boolean; checks: { name: string; ok: boolean | null; summary: string }[] };
    assert.equal(v.ok, true);
    assert.match(v.checks.find((c) => c.name === 'signature')!.summary, /1 checked, 0 failed/);
  });

  test('verify_agent verifies the whole chain, by export and by chain pages', async () => {
    for (const via of ['export', 'chain']) {
      const r = ok(await signed.mcp.callTool({ name: 'verify_agent', arguments: { handle: agent.handle, via } }));
      assert.equal(r.ok, true, JSON.stringify(r));
      assert.equal(r.records, 2);
      assert.match(String(r.verdict), /^PASS/);
    }
  });

  test('list_decisions and search_ledger', async () => {
    const mine = ok(await signed.mcp.callTool({ name: 'list_decisions', arguments: { limit: 10 } }));
    assert.equal((mine.data as unknown[]).length, 2);
    const found = ok(await signed.mcp.callTool({ name: 'search_ledger', arguments: { agent: agent.handle, symbol: 'AAPL', type: 'decision' } }));
    const ids = (found.data as { entry: { id: string } }[]).map((d) => d.entry.id);
    assert.ok(ids.includes(recordId), JSON.stringify(found).slice(0, 400));
    const none = ok(await signed.mcp.callTool({ name: 'search_ledger', arguments: { agent: agent.handle, symbol: 'MSFT' } }));
    assert.deepEqual(none.data, []);
  });

  test('get_performance: the agent\'s performance report; an unknown agent is a tool error', async () => {
    const result = await signed.mcp.callTool({ name: 'get_performance', arguments: { handle: agent.handle } });
    assert.ok(operationIdAt('/v1/agents/{handle}/performance', 'get'), 'the service serves performance');
    const report = ok(result);
    assert.equal(report.object, 'performance');
    assert.equal(report.agent, agent.handle);
    const unknown = toolError(await signed.mcp.callTool({ name: 'get_performance', arguments: { handle: 'no-such-agent' } }));
    assert.equal(unknown.code, 'not_found');
  });

  test('an invalid argument is a tool error naming the field; nothing is recorded', async () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['record_decision', { symbol: 'AAPL' }, 'action'],
      ['record_decision', { ...DECISION, action: 'BUY_NOW' }, 'action'],
      ['record_decision', { ...DECISION, confidence: true }, 'confidence'],
      ['record_decision', { ...DECISION, colour: 'red' }, 'colour'],
      ['record_decision', { ...DECISION, symbol: 'X'.repeat(21) }, 'symbol'],
      ['record_decision', { ...DECISION, idempotency_key: 'short' }, 'idempotency_key'],
      ['get_proof', {}, 'record_id'],
      ['search_ledger', { limit: 500 }, 'limit'],
      ['search_ledger', { type: 'trade' }, 'type'],
      ['list_decisions', { cursor: 'nope' }, 'cursor'],
      ['verify_agent', { handle: 'x', via: 'carrier-pigeon' }, 'via'],
    ];
    for (const [name, args, param] of cases) {
      const e = toolError(await signed.mcp.callTool({ name, arguments: args }));
      assert.equal(e.code, 'invalid_request', `${name} ${JSON.stringify(args)}`);
      assert.equal(e.param, param, `${name} ${JSON.stringify(args)}: ${e.message}`);
    }
    const mine = ok(await signed.mcp.callTool({ name: 'list_decisions', arguments: {} }));
    assert.equal((mine.data as unknown[]).length, 2);
  });

  test('what only the service can judge comes back as its error, with code, param and request_id', async () => {
    // Unsigned: the service checks the range. Signed: the local core refuses it the same way.
    const served = toolError(await unsigned.mcp.callTool({ name: 'record_decision', arguments: { ...DECISION, confidence: '1.5' } }));
    assert.deepEqual([served.code, served.param, served.status], ['invalid_request', 'confidence', 400]);
    assert.match(served.request_id ?? '', /\S/);
    const local = toolError(await signed.mcp.callTool({ name: 'record_decision', arguments: { ...DECISION, confidence: '1.5' } }));
    assert.deepEqual([local.code, local.param], ['invalid_request', 'confidence']);
    const missing = toolError(await signed.mcp.callTool({ name: 'get_proof', arguments: { record_id: 'dec_01ARZ3NDEKTSV4RRFFQ69G5FAV' } }));
    assert.deepEqual([missing.code, missing.param, missing.status], ['not_found', 'record_id', 404]);
  });

  test('resources: the agent\'s profile, and llms.txt (or the service\'s error for it)', async () => {
    const { resources } = await signed.mcp.listResources();
    assert.ok(resources.some((r) => r.uri === 'ledger://llms.txt'));
    const own = resources.find((r) => r.uri === `ledger://agents/${agent.handle}`);
    assert.ok(own, 'the key file\'s agent');
    const { resourceTemplates } = await signed.mcp.listResourceTemplates();
    assert.deepEqual(resourceTemplates.map((t) => t.uriTemplate), ['ledger://agents/{handle}']);
    const profile = await signed.mcp.readResource({ uri: own.uri });
    const body = JSON.parse(String((profile.contents[0] as { text: string }).text)) as { handle: string; counts: { signed: number } };
    assert.equal(body.handle, agent.handle);
    assert.equal(body.counts.signed, 1);
    const unknown = await signed.mcp.readResource({ uri: 'ledger://agents/no-such-agent' }).then(() => null, (e: unknown) => e);
    assert.ok(unknown instanceof McpError);
    assert.equal((unknown.data as { error: { code: string } }).error.code, 'not_found');

    const served = await fetch(`${s.baseUrl.replace(/\/v1$/, '')}/llms.txt`);
    const llms = await signed.mcp.readResource({ uri: 'ledger://llms.txt' }).then((r) => r, (e: unknown) => e);
    if (served.status === 200) {
      assert.equal((llms as { contents: { text: string }[] }).contents[0]!.text, await served.text());
    } else {
      // This service has no llms.txt yet: the resource read fails with the service's error.
      assert.ok(llms instanceof McpError, String(llms));
      assert.equal((llms.data as { error: { code: string; status: number } }).error.status, served.status);
      assert.equal((llms.data as { error: { code: string } }).error.code, 'not_found');
    }
  });
});
