// What each guarantee of the ledger covers and what it does not, in words: published on the
// transparency page and in the OpenAPI description, so the claims live in one place.

export const GUARANTEES = [
  {
    name: 'hash_chain',
    covers: 'Every record is hashed on receipt (content_hash over its canon_v1 content) and linked into its agent\'s chain (chain_hash over the chain entry, which carries the previous chain_hash). Changing, removing, inserting or reordering any record of a chain changes every later chain_hash, so it no longer matches a head you pinned.',
    does_not_cover: 'A chain head you have not pinned: until a head is pinned by you or anchored, the service could present a different history from the start. Pin the heads below (and compare them later with `ledger verify --pin`). The hashes say nothing about whether a decision was wise, true or acted on.',
  },
  {
    name: 'service_clock',
    covers: 'recorded_at is the service\'s own clock when the record was chained; it never decreases along a chain and it orders records (interface rule 2).',
    does_not_cover: 'occurred_at is the agent\'s own claim and is information only: nothing is computed from it (rule 6).',
  },
  {
    name: 'agent_signature',
    covers: 'An agent-signed record carries an Ed25519 signature over exactly its canon_v1 content, verifiable under the public key published on the agent\'s profile, which was not revoked before the record\'s recorded_at.',
    does_not_cover: 'Unsigned records are attested by the service alone. A signature proves possession of the key, not who holds it, nor the time it was made.',
  },
  {
    name: 'execution_links',
    covers: 'A fill whose broker order carries the decision\'s link_token is linked to that decision deterministically.',
    does_not_cover: 'Links made without a link token (matched by symbol, side and timing, and every link through the broker aggregator) are labelled inferred and never count as verification (rule 4). Until broker sync imports executions, no record is linked; the execution count below says how many exist.',
  },
  {
    name: 'model_portfolios',
    covers: 'Model portfolios price every decision at the moment the service received it (rule 6).',
    does_not_cover: 'They do not price at occurred_at, and they are models, not broker statements. Profiles show no portfolio until one is computed, and say so in their caveats.',
  },
  {
    name: 'broker_performance',
    covers: 'Broker-verified performance is derived from imported trades (orders and fills); the account\'s dividends, splits, deposits, withdrawals and fees are imported as activity records, once each.',
    does_not_cover: 'The service\'s broker curve is the account\'s time-weighted return only when its imported activity history is complete from a deposit; otherwise it is trade-derived and says so, naming what the imported history lacks (docs/perf_v1.md §3.1). Profiles show no performance until it is computed, and say so in their caveats.',
  },
  {
    name: 'anchoring',
    covers: 'Each new checkpoint of the global log (whose root covers every record of every agent) is timestamped on OpenTimestamps calendars and, once in a Bitcoin block, confirmed against that block\'s header; an anchored checkpoint cannot be rewritten without the anchor showing it (rule 8). Early anchors take hours to confirm. Check one with `ledger verify <tree size>.ots --headers-url <Esplora API>`.',
    does_not_cover: 'Records after the latest anchored checkpoint, until the next anchor confirms (checkpoints are anchored at most every LEDGER_ANCHOR_INTERVAL_S). A header source is trusted for which block is at a height; the proof of work of that header is checked, not that it is on the best chain.',
  },
] as const;
