// Shared by the webhook tests: a receiver (a real HTTP server on loopback) that checks every
// delivery with standardwebhooks' own Webhook.verify and answers as the test says (a status, a
// delay, never), an endpoint registered through the API, and a deliverer with short settings.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { LedgerApp } from '../../src/api/app.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import type { Deliverer } from '../../src/webhooks/deliverer.ts';
import { delivererJob, type DelivererTuning } from '../../src/webhooks/service.ts';
import { loadConfig } from '../../src/config.ts';
import type { Keyring } from '../../src/vault/vault.ts';
import { parseKeyring } from '../../src/vault/vault.ts';

export type Delivery = {
  id: string;
  timestamp: string;
  body: string;
  /** The parsed body, as Webhook.verify returned it. */
  event: { type: string; timestamp: string; data: Record<string, unknown> & { id?: string; chain_seq?: number } };
  at: number;
};

/** What the receiver does with a delivery that verified: answer `status` after `delayMs`, or never. */
export type Behaviour = (delivery: Delivery, n: number) => { status: number; delayMs?: number } | 'hang';

export type Receiver = {
  url: string;
  /** Deliveries that verified, in arrival order (including those answered with an error). */
  received: Delivery[];
  /** Deliveries answered 2xx. */
  accepted: Delivery[];
  /** Requests whose signature did not verify. */
  rejected: string[];
  behave: (b: Behaviour) => void;
  waitFor: (predicate: () => boolean, timeoutMs?: number, what?: string) => Promise<void>;
  close: () => Promise<void>;
};

export async function startReceiver(secret: () => string | null, behaviour: Behaviour = () => ({ status: 204 })): Promise<Receiver> {
  let behave = behaviour;
  const received: Delivery[] = [];
  const accepted: Delivery[] = [];
  const rejected: string[] = [];
  const hanging = new Set<ServerResponse>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const s = secret();
      let event: Delivery['event'];
      try {
        if (!s) throw new Error('no secret yet');
        event = new Webhook(s).verify(body, req.headers as Record<string, string>) as Delivery['event'];
      } catch (err) {
        rejected.push(`${(err as Error).message}`);
        res.writeHead(400).end();
        return;
      }
      const d: Delivery = { id: String(req.headers['webhook-id']), timestamp: String(req.headers['webhook-timestamp']), body, event, at: Date.now() };
      received.push(d);
      const answer = behave(d, received.length);
      if (answer === 'hang') {
        hanging.add(res);
        return;
      }
      const reply = () => {
        if (answer.status >= 200 && answer.status < 300) accepted.push(d);
        res.writeHead(answer.status).end();
      };
      if (answer.delayMs) setTimeout(reply, answer.delayMs);
      else reply();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    accepted,
    rejected,
    behave: (b) => (behave = b),
    waitFor: async (predicate, timeoutMs = 20_000, what = 'the deliveries') => {
      const until = Date.now() + timeoutMs;
      while (!predicate()) {
        if (Date.now() > until) throw new Error(`timed out waiting for ${what}: ${received.length} received, ${accepted.length} accepted`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export const MASTER_KEY = 'AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=';
export const WEBHOOK_ENV = { LEDGER_MASTER_KEY: MASTER_KEY, LEDGER_WEBHOOKS_ALLOW_PRIVATE: 'true', LEDGER_WRITE_LIMIT_PER_MIN: '1000000' };

export function testKeyring(): () => Promise<Keyring> {
  const ring = parseKeyring(MASTER_KEY);
  if (!ring.ok) throw new Error(ring.error.message);
  return async () => ring.value;
}

/** Registers an endpoint through the API; answers its id and secret. */
export async function createEndpoint(t: LedgerApp, apiKey: string, url: string, events: string[] = ['decision.recorded']): Promise<{ id: string; secret: string }> {
  const res = await t.app.inject({
    method: 'POST', url: '/v1/webhooks', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    payload: JSON.stringify({ url, events }),
  });
  if (res.statusCode !== 201) throw new Error(`POST /v1/webhooks answered ${res.statusCode}: ${res.body}`);
  return { id: res.json().id, secret: res.json().secret };
}

/** A deliverer on the store with short settings: retries from `retryBaseMs`, attempts cut at `timeoutMs`. */
export function testDeliverer(store: LedgerStore, opts: { env?: Record<string, string>; tuning?: DelivererTuning; log?: string[] } = {}): Deliverer {
  const config = loadConfig({ ...WEBHOOK_ENV, LEDGER_WEBHOOKS_RETRY_BASE_MS: '50', LEDGER_WEBHOOKS_TIMEOUT_MS: '1000', ...opts.env });
  const deliverer = delivererJob({
    store, config: config.webhooks, keyring: testKeyring(), baseUrl: 'http://ledger.test/v1',
    log: (level, message) => opts.log?.push(`${level}: ${message}`),
    tuning: { pollMs: 10, holdRetryMs: 100, stopGraceMs: 200, ...opts.tuning },
  });
  deliverer.start();
  return deliverer;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export type LoggedDelivery = { id: string; status: string; subject: string; attempt_count: number; next_attempt_at: string | null;
  attempts: { status_code: number | null; error: string | null }[] };

/** The endpoint's delivery log (newest first) once `until` holds of it: a receiver sees a delivery just before the deliverer logs it. */
export async function deliveryLog(t: LedgerApp, apiKey: string, endpointId: string, until: (log: LoggedDelivery[]) => boolean = () => true): Promise<LoggedDelivery[]> {
  for (let i = 0; ; i++) {
    const res = await t.app.inject({ method: 'GET', url: `/v1/webhooks/${endpointId}/deliveries?limit=100`, headers: { authorization: `Bearer ${apiKey}` } });
    if (res.statusCode !== 200) throw new Error(res.body);
    const log = res.json().data as LoggedDelivery[];
    if (until(log)) return log;
    if (i > 500) throw new Error(`the delivery log never came to the expected state: ${res.body.slice(0, 500)}`);
    await sleep(20);
  }
}
