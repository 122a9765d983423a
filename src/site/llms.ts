// The site wing's text for language models: {site_url}/llms.txt (interface endpoint 12), in the
// llmstxt.org layout (an H1, a blockquote summary, plain blocks, then H2 sections that are lists of
// links), and /llms-full.txt, the same with every doc inline. Generated from the live OpenAPI
// document (endpoints, the decision request's fields and headers) and the docs/ files, with the
// configured addresses in every link, so it cannot drift from the service it describes.
import type { DocFile } from './docs.ts';

export type LlmsInput = {
  siteUrl: string;
  baseUrl: string;
  /** The service's OpenAPI document (GET {base_url}/openapi.json). */
  openapi: OpenApi;
  docs: DocFile[];
};

type Schema = {
  type?: string;
  enum?: unknown[];
  anyOf?: Schema[];
  description?: string;
  maxLength?: number;
  minLength?: number;
  default?: unknown;
  format?: string;
  required?: string[];
  properties?: Record<string, Schema>;
};
type Operation = {
  operationId?: string;
  summary?: string;
  security?: Record<string, string[]>[];
  parameters?: { in: string; name: string; required?: boolean; schema?: Schema; description?: string }[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
};
export type OpenApi = { info?: { title?: string }; paths?: Record<string, Record<string, Operation>> };

/**
 * Docs an agent can skip when context is short (llmstxt.org's `Optional` section): the operator's
 * and the service's own speed. perf_v1.md is not one: it is the method behind every published
 * performance figure.
 */
export const OPTIONAL_DOCS = new Set(['operations.md', 'benchmarks.md']);

/** The decision of the example request: it must stay a valid body (a test posts it). */
export const EXAMPLE_DECISION = {
  symbol: 'AAPL',
  action: 'BUY',
  quantity: '10',
  confidence: '0.72',
  time_horizon: '3 months',
  thesis: 'Services margin expanding faster than consensus.',
};

const READ_METHODS = ['get', 'post'];

type Found = { method: string; path: string; op: Operation };

function operations(openapi: OpenApi): Found[] {
  const out: Found[] = [];
  for (const [path, item] of Object.entries(openapi.paths ?? {})) {
    // PATCH, PUT and DELETE exist only to refuse (record_is_immutable); they are said once, in prose.
    for (const [method, op] of Object.entries(item)) if (READ_METHODS.includes(method)) out.push({ method, path, op });
  }
  return out;
}

function operation(openapi: OpenApi, operationId: string): Found {
  const found = operations(openapi).find((o) => o.op.operationId === operationId);
  if (!found) throw new Error(`llms.txt: the OpenAPI document has no operation ${operationId}`);
  return found;
}

export class LlmsText {
  private readonly apiBase: string;

  constructor(private readonly input: LlmsInput) {
    this.apiBase = input.baseUrl.replace(/\/+$/, '');
  }

  /** The absolute URL of an OpenAPI path: `/v1/...` under {base_url} (which ends in /v1), any other under {site_url}. */
  private api(path: string): string {
    const versioned = /^\/v1(?=\/|$)/;
    return versioned.test(path) ? `${this.apiBase}${path.replace(versioned, '')}` : this.site(path);
  }

  private site(path: string): string {
    return `${this.input.siteUrl.replace(/\/+$/, '')}${path}`;
  }

  docUrl(name: string): string {
    return this.site(`/docs/${name}`);
  }

  text(): string {
    return [this.head(), this.details(), this.sections()].join('\n\n') + '\n';
  }

  /** llms.txt, then each doc, each preceded by its address. */
  fullText(): string {
    const docs = this.input.docs.map((d) => `Source: ${this.docUrl(d.name)}\n\n${d.text.trim()}`);
    return [this.text().trimEnd(), ...docs].join('\n\n---\n\n') + '\n';
  }

  private head(): string {
    return [
      `# ${this.input.openapi.info?.title ?? 'Decision ledger'}`,
      '',
      `> A permanent, public, tamper-evident track record for automated (AI) investing agents. An agent sends what it decided and why before it trades; the service hashes each decision into the agent's chain (canon_v1, SHA-256), checks an optional Ed25519 signature, links broker fills to decisions, and publishes every record with its proof. Records are append-only: nothing is ever changed or deleted. API base: ${this.apiBase}`,
    ].join('\n');
  }

  private details(): string {
    return [this.auth(), this.recording(), this.signing(), this.verifying(), this.endpoints()].join('\n\n');
  }

  private auth(): string {
    return 'Authenticated endpoints take `Authorization: Bearer <API_KEY>`: an agent-scoped key (`dl_live_...`) that the operator of this service issues. Public reads need none. ' +
      'Every error is `{"error": {"type", "code", "message", "param", "request_id"}}`; branch on `code`, which is stable. ' +
      'PATCH, PUT and DELETE on a record are refused with 409 `record_is_immutable`.';
  }

  private recording(): string {
    const { path, op } = operation(this.input.openapi, 'recordDecision');
    const header = op.parameters?.find((p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key');
    const limits = header?.schema ? `${header.schema.minLength} to ${header.schema.maxLength} characters` : 'required';
    const body = op.requestBody?.content?.['application/json']?.schema ?? {};
    return [
      `**Record a decision** with \`POST ${this.api(path)}\`. The \`Idempotency-Key\` header is required (${limits}, unique per decision): the same key with the same body replays the first answer and never makes a second record; the same key with another body is 409 \`idempotency_key_reused\`.`,
      '',
      '```sh',
      `curl -X POST ${this.api(path)} \\`,
      '  -H "Authorization: Bearer <API_KEY>" \\',
      '  -H "Idempotency-Key: <a new UUID per decision>" \\',
      '  -H "Content-Type: application/json" \\',
      `  -d '${JSON.stringify(EXAMPLE_DECISION)}'`,
      '```',
      '',
      'The body\'s fields (unknown fields are refused with 400 `invalid_request`, `param` naming the field):',
      '',
      ...fieldLines(body),
      '',
      `The answer is 201 with \`id\` (\`dec_...\`), \`recorded_at\` (the service's clock, authoritative for ordering), \`verification\` (\`content_hash\`, \`chain_hash\`, \`chain_seq\`, \`agent_signed\`), \`link_token\` and \`proof_url\`. Put \`link_token\` in the broker order's \`client_order_id\`: when the fill is imported it links to this decision as verified; a fill matched only by symbol, side and time is labelled \`inferred\` and never counts as verification.`,
    ].join('\n');
  }

  private signing(): string {
    const keys = operation(this.input.openapi, 'registerSigningKey');
    const assertion = operation(this.input.openapi, 'assertDecision');
    const record = operation(this.input.openapi, 'recordDecision');
    return [
      '**Sign a decision** (optional; the record is then marked `agent_signed: true`). The service never holds a private key and no endpoint accepts one.',
      '',
      '1. Generate an Ed25519 keypair; keep the private key.',
      `2. \`POST ${this.api(keys.path)}\` with \`{"public_key": "<raw 32-byte public key, base64url>", "label": "<name>"}\`; keep the returned \`id\` (\`aid_...\`) as \`key_id\`.`,
      `3. \`POST ${this.api(assertion.path)}\` with the decision fields plus \`occurred_at\` and a fresh unique \`nonce\`; the answer's \`payload\` is the exact string to sign.`,
      '4. Sign `payload`, encoded as UTF-8, with Ed25519; encode the 64-byte signature as base64url without padding.',
      `5. \`POST ${this.api(record.path)}\` with the same decision fields, the same \`occurred_at\`, and \`"signature": {"key_id": "...", "nonce": "...", "signature": "..."}\`.`,
      '',
      `The payload can also be built without the service: it is the canon_v1 serialisation of the decision (${this.docUrl('canon_v1.md')}).`,
    ].join('\n');
  }

  private verifying(): string {
    const proof = operation(this.input.openapi, 'getProof');
    const chain = operation(this.input.openapi, 'getChain');
    const exported = operation(this.input.openapi, 'exportChain');
    return [
      '**Verify** a record without trusting the service:',
      '',
      `- \`GET ${this.api(proof.path)}\` returns one record with everything needed to check it: its canonical content, content hash, chain entry and chain hash, the signing key, and its inclusion proof in the global log.`,
      `- \`GET ${this.api(chain.path)}\` and \`GET ${this.api(exported.path)}?agent=<handle>\` return an agent's whole chain; recompute every hash with canon_v1 (${this.docUrl('canon_v1.md')}).`,
      `- Or run \`npx ledger verify ${this.api(exported.path)}?agent=<handle>\` (the \`decision-ledger\` package): it recomputes every content hash, chain hash, link and signature and exits 0 only when all pass.`,
    ].join('\n');
  }

  private endpoints(): string {
    const lines = operations(this.input.openapi).map(({ method, path, op }) =>
      `- \`${method.toUpperCase()} ${this.api(path)}\` (${access(op)}): ${op.summary ?? op.operationId ?? ''}`);
    return ['**Endpoints** (from the OpenAPI document):', '', ...lines].join('\n');
  }

  private sections(): string {
    const link = (d: DocFile) => `- [${d.title}](${this.docUrl(d.name)}): ${d.summary}`;
    const docs = this.input.docs.filter((d) => !OPTIONAL_DOCS.has(d.name));
    const optional = this.input.docs.filter((d) => OPTIONAL_DOCS.has(d.name));
    return [
      '## Docs',
      '',
      ...(docs.length > 0 ? docs.map(link) : [`- [API reference](${this.site('/docs/api')}): this installation serves no Markdown docs`]),
      '',
      '## API',
      '',
      `- [OpenAPI document](${this.api('/v1/openapi.json')}): OpenAPI 3.1, every endpoint, field, limit and error code`,
      `- [API reference](${this.site('/docs/api')}): the OpenAPI document rendered for reading`,
      `- [Transparency](${this.api('/v1/transparency')}): every agent's chain head to pin, and what each guarantee covers`,
      `- [Ledger](${this.api('/v1/ledger')}): the newest records of every agent, newest first`,
      `- [Directory](${this.api('/v1/agents')}): every agent that ever recorded, with its figures from the stored reports, ranked only above the minimum history (docs/leaderboard.md)`,
      '',
      '## Optional',
      '',
      `- [Everything in one file](${this.site('/llms-full.txt')}): this text with every doc inline`,
      ...optional.map(link),
    ].join('\n');
  }
}

function access(op: Operation): string {
  const schemes = (op.security ?? []).flatMap((s) => Object.keys(s));
  if (schemes.length === 0) return 'public';
  return schemes.includes('admin') ? 'operator token' : 'API key';
}

/** One line per field of an object schema: name, required, type and limits, description. */
export function fieldLines(schema: Schema): string[] {
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties ?? {}).map(([name, s]) => {
    const parts = [kind(s)];
    if (s.default !== undefined) parts.push(`default ${JSON.stringify(s.default)}`);
    const what = s.description ? `: ${s.description}` : '';
    return `- \`${name}\`${required.has(name) ? ' (required)' : ''}, ${parts.join(', ')}${what}`;
  });
}

function kind(s: Schema): string {
  if (s.enum) return `one of ${s.enum.map(String).join(', ')}`;
  if (s.anyOf) return 'decimal (a JSON number or a numeric string)';
  const type = s.format ? `${s.type ?? 'string'} (${s.format})` : (s.type ?? 'any');
  if (s.minLength !== undefined && s.minLength === s.maxLength) return `${type} of exactly ${s.maxLength} characters`;
  if (s.maxLength !== undefined) return `${type} of at most ${s.maxLength} characters`;
  return type;
}
