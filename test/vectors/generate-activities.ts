// Generates test/vectors/canon_v1/activities.json ONCE (docs/canon_v1.md §3.2: the `activity`
// record). Vectors never change after release: this refuses to overwrite the file unless --force.
// Run: node --import tsx test/vectors/generate-activities.ts [--force]
// Each record holds the broker's row as the client hands it to the normaliser (JSON numbers
// already read as decimal text), the content document src/brokers/activity.ts makes of it, its
// canon_v1 text and hash, and the chain entry and hash of its place in a five-record chain.

import { existsSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { alpacaActivities, activityContent, snapTradeActivities, type BrokerActivity } from '../../src/brokers/activity.ts';
import type { AlpacaNonTradeActivity } from '../../src/brokers/alpaca.ts';
import type { SnapTradeActivity } from '../../src/brokers/snaptrade.ts';
import { canonicalJson, chainEntry, chainHash, contentHash, type CanonValue, type ChainEntryInput } from '../../src/core/index.ts';

const FILE = join(dirname(fileURLToPath(import.meta.url)), 'canon_v1', 'activities.json');
const AGENT = 'momentum-bot';
const ALPACA_ACCOUNT = '0f7c2b7e-1c1e-4c55-9a43-2b1b8a9d0c11';
const SNAPTRADE_ACCOUNT = '917c8734-8470-4a3e-a18f-57c3f2ee6631';

const alpacaRows: AlpacaNonTradeActivity[] = [
  { id: '20260105100000000::3b1f0c2e-5a44-4c1e-8f0a-1d2e3f405060', activity_type: 'CSD', date: '2026-01-05', net_amount: '12000.00', status: 'executed', description: 'Cash deposit' },
  { id: '20260107182700123::8e2d4b6a-0c1e-4f3a-9b5d-7e8f90a1b2c3', activity_type: 'SPLIT', activity_sub_type: 'FSPLIT', date: '2026-01-08', net_amount: '0', symbol: 'XYZ', qty: '-10', price: '1010.00', status: 'executed' },
  { id: '20260107182700123::9f3e5c7b-1d2f-4a4b-8c6e-8f9a01b2c3d4', activity_type: 'SPLIT', activity_sub_type: 'FSPLIT', date: '2026-01-08', net_amount: '0', symbol: 'XYZ', qty: '100', price: '101.0', status: 'executed' },
  { id: '20260109070000000::0a4f6d8c-2e3a-4b5c-9d7f-90a1b2c3d4e5', activity_type: 'DIV', activity_sub_type: 'CDIV', date: '2026-01-09', net_amount: '25.00', symbol: 'XYZ', qty: '100', per_share_amount: '0.25', status: 'executed' },
];
const snapTradeRows: SnapTradeActivity[] = [
  {
    id: 'c1a2b3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d', type: 'WITHDRAWAL', trade_date: '2026-01-13T00:00:00Z', symbol: null, option_symbol: null,
    price: '0', units: '0', amount: '-500', fee: '0', external_reference_id: null, currency: { code: 'USD' },
  },
];

function fromRows(): BrokerActivity[] {
  const a = alpacaActivities({ accountRef: ALPACA_ACCOUNT, currency: 'USD', rows: alpacaRows });
  const s = snapTradeActivities({ accountRef: SNAPTRADE_ACCOUNT, rows: snapTradeRows });
  if (a.problems.length + s.problems.length > 0) throw new Error('a vector row does not normalise');
  return [...a.activities, ...s.activities];
}

const ids = ['act_01KE6Q0M8T2V7B3N5C9D1F0G00', 'act_01KE6Q0M8T2V7B3N5C9D1F0G01', 'act_01KE6Q0M8T2V7B3N5C9D1F0G02', 'act_01KE6Q0M8T2V7B3N5C9D1F0G03', 'act_01KE6Q0M8T2V7B3N5C9D1F0G04'];
const recordedAt = ['2026-01-05T15:30:00.000Z', '2026-01-08T01:00:00.000Z', '2026-01-08T01:00:00.000Z', '2026-01-09T13:00:00.250Z', '2026-01-14T06:00:00.000Z'];
const rows: unknown[] = [...alpacaRows, ...snapTradeRows];

let prev = '0'.repeat(64);
const records = fromRows().map((activity, i) => {
  const made = activityContent({ agent: AGENT, activity });
  if (!made.ok) throw new Error(made.error.message);
  const content: CanonValue = made.document;
  const input: ChainEntryInput = {
    agent: AGENT, seq: i + 1, id: ids[i]!, type: 'activity', recordedAt: recordedAt[i]!, contentHash: contentHash(content), prevHash: prev,
  };
  const record = {
    seq: i + 1, id: input.id, type: 'activity' as const, recorded_at: input.recordedAt, broker_row: rows[i], content,
    content_canonical: canonicalJson(content), content_hash: input.contentHash, prev_hash: prev,
    chain_entry_canonical: canonicalJson(chainEntry(input)), chain_hash: chainHash(input),
  };
  prev = record.chain_hash;
  return record;
});

const vectors = {
  description:
    'canon_v1 section 3.2: activity records (non-trade broker activities). One agent\'s chain of five activity records: an Alpaca deposit, a split as its REMOVE and ADD rows, a cash dividend, and a SnapTrade withdrawal reported as a date. broker_row is the broker\'s row as the client reads it (numbers as decimal text); content is the content document made of it; content_canonical is canon_v1(content), content_hash its sha256; chain_entry_canonical is canon_v1(chain entry), chain_hash its sha256. No record is signed.',
  agent: AGENT,
  keys: [],
  records,
};

if (existsSync(FILE) && !process.argv.includes('--force')) {
  console.error(`refusing to overwrite released vectors (${FILE}); pass --force if you really mean it`);
  process.exit(1);
}
writeFileSync(FILE, JSON.stringify(vectors, null, 2) + '\n');
console.log(`wrote ${FILE}`);
