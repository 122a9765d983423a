#!/usr/bin/env node
// Records a decision with the client and shows what makes it safe to retry: one Idempotency-Key
// per decision, reused on every retry (the client does this itself; here it is done again by
// hand to show the replay), and errors that carry the interface's code and param.
//
//   npm run build    # once, in a checkout
//   LEDGER_BASE_URL=http://localhost:8080/v1 LEDGER_API_KEY=dl_live_... node examples/record-decision.mjs
import { LedgerApiError, LedgerClient } from 'decision-ledger/client';

const apiKey = process.env.LEDGER_API_KEY;
if (!apiKey) {
  console.error('set LEDGER_API_KEY to an agent API key (dl_live_...) with the decisions:write and decisions:read scopes');
  process.exit(2);
}
const client = new LedgerClient({ baseUrl: process.env.LEDGER_BASE_URL ?? 'http://localhost:8080/v1', apiKey });

const decision = { symbol: 'MSFT', action: 'INCREASE', target_allocation_pct: 12.5, confidence: '0.6', thesis: 'Cloud growth re-accelerating.' };
const recorded = await client.recordDecision(decision);
console.log(`recorded ${recorded.id} (chain_seq ${recorded.verification.chain_seq}) with Idempotency-Key ${recorded.idempotency_key}`);
console.log(`  link_token ${recorded.link_token}: put it in the broker order's client_order_id`);

// Sending the same decision with the same key again (as a retry after a lost answer would) records nothing new.
const again = await client.recordDecision(decision, { idempotencyKey: recorded.idempotency_key });
console.log(`the same key again: ${again.id}, replayed=${again.replayed}`);

// A decision the service refuses: a typed error naming the field; not retried.
try {
  await client.recordDecision({ ...decision, confidence: '1.7' });
} catch (e) {
  if (!(e instanceof LedgerApiError)) throw e;
  console.log(`refused: ${e.status} ${e.code}, param ${e.param}, request_id ${e.requestId}`);
}

const page = await client.listDecisions({ limit: 5 });
console.log(`newest decisions: ${page.data.map((d) => `${d.id} ${d.content.symbol}`).join(', ')}`);
if (again.id !== recorded.id || !again.replayed) process.exit(1);
