// The tool server (Model Context Protocol, on the official SDK's low-level Server): lists the
// ledger's tools (tools.ts) with their JSON schemas, checks each call's arguments against its
// schema, runs it through the client, and answers a failure as a tool error (isError) carrying
// the spec's error body: code, message, param (the field at fault), request_id and status.
// Resources: an agent's public profile (ledger://agents/{handle}) and the service's llms.txt.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema, ErrorCode, ListResourcesRequestSchema, ListResourceTemplatesRequestSchema, ListToolsRequestSchema, McpError,
  ReadResourceRequestSchema, type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { LedgerError, LedgerValidationError } from '../client/index.ts';
import { ledgerTools, type Tool, type ToolContext } from './tools.ts';

export const SERVER_NAME = 'decision-ledger';
export const SERVER_VERSION = '0.1.0';

const INSTRUCTIONS = 'A permanent, public, tamper-evident track record for automated investing agents. '
  + 'Call record_decision before you trade, with what you decided and why; stamp the link_token it answers into your broker order\'s client_order_id. '
  + 'get_proof and verify_agent check records with canon_v1, trusting nothing but the published bytes.';

const AGENT_TEMPLATE = 'ledger://agents/{handle}';
const LLMS_TXT = 'ledger://llms.txt';

type CheckedTool = Tool & { validate: ValidateFunction };

/** The dotted path of the failing field (`/metadata/a` -> `metadata.a`; a missing or unknown property by its name). */
function paramOf(e: ErrorObject): string {
  const path = e.instancePath.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  const named = (e.params as { missingProperty?: string; additionalProperty?: string }).missingProperty
    ?? (e.params as { additionalProperty?: string }).additionalProperty;
  if (typeof named === 'string') path.push(named);
  return path.join('.');
}

function argumentError(errors: ErrorObject[]): LedgerValidationError {
  const first = errors.find((e) => e.keyword === 'anyOf') ?? errors[0]!;
  const param = paramOf(first);
  const message = first.keyword === 'required' ? `${param} is required`
    : first.keyword === 'additionalProperties' ? `${param} is not a known argument`
      : first.keyword === 'anyOf' ? `${param} must be a decimal: a JSON number or a string such as "12.5"`
        : `${param || 'the arguments'} ${first.message ?? 'are invalid'}`;
  return new LedgerValidationError({ code: 'invalid_request', type: 'invalid_request_error', status: 0, message, param: param || undefined });
}

function toolError(e: unknown): CallToolResult {
  const error = e instanceof LedgerError
    ? e.toJSON()
    : { type: 'api_error', code: 'internal_error', message: e instanceof Error ? e.message : String(e), status: 0 };
  return { isError: true, content: [{ type: 'text', text: JSON.stringify({ error }) }], structuredContent: { error } };
}

function toolResult(value: unknown): CallToolResult {
  const structured = typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : { value };
  return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: structured };
}

/** A resource read that failed: a JSON-RPC error whose data is the spec's error body. */
function resourceError(e: unknown, uri: string): McpError {
  if (e instanceof LedgerError) return new McpError(ErrorCode.InvalidRequest, `${uri}: ${e.code}: ${e.message}`, { error: e.toJSON() });
  return new McpError(ErrorCode.InternalError, `${uri}: ${e instanceof Error ? e.message : String(e)}`);
}

export function createLedgerMcpServer(ctx: ToolContext): Server {
  const ajv = new Ajv({ strict: false, allErrors: false, useDefaults: false });
  ajv.addFormat('date-time', true); // judged by the service, on its clock and canon_v1's rules
  ajv.addFormat('uri', true);
  const tools = new Map<string, CheckedTool>(ledgerTools().map((t) => [t.name, { ...t, validate: ajv.compile(t.inputSchema) }]));

  const server = new Server(
    { name: SERVER_NAME, version: SERVER_VERSION, title: 'Decision ledger' },
    { capabilities: { tools: {}, resources: {} }, instructions: INSTRUCTIONS },
  );

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [...tools.values()].map(({ name, title, description, inputSchema, annotations }) => ({ name, title, description, inputSchema, annotations })),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = tools.get(request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `unknown tool ${request.params.name}`);
    const args = request.params.arguments ?? {};
    if (!tool.validate(args)) return toolError(argumentError(tool.validate.errors ?? []));
    try {
      return toolResult(await tool.run(args, ctx));
    } catch (e) {
      return toolError(e);
    }
  });

  server.setRequestHandler(ListResourcesRequestSchema, async () => ({
    resources: [
      { uri: LLMS_TXT, name: 'llms.txt', title: 'The service described for agents', mimeType: 'text/plain' },
      ...(ctx.signer ? [{ uri: `ledger://agents/${ctx.signer.agent}`, name: `agent ${ctx.signer.agent}`, title: 'This agent\'s public profile', mimeType: 'application/json' }] : []),
    ],
  }));

  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: [{ uriTemplate: AGENT_TEMPLATE, name: 'agent profile', title: 'An agent\'s public profile', mimeType: 'application/json' }],
  }));

  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const { uri } = request.params;
    try {
      if (uri === LLMS_TXT) return { contents: [{ uri, mimeType: 'text/plain', text: await ctx.client.llmsTxt() }] };
      const handle = /^ledger:\/\/agents\/([^/?#]+)$/.exec(uri)?.[1];
      if (handle) {
        const profile = await ctx.client.getAgent(decodeURIComponent(handle));
        return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(profile) }] };
      }
    } catch (e) {
      throw resourceError(e, uri);
    }
    throw new McpError(ErrorCode.InvalidParams, `unknown resource ${uri}`);
  });

  return server;
}
