// SQLite schema, as ordered migrations. A migration never changes once released; add a new one.
export const SQLITE_MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE agents (
    id TEXT PRIMARY KEY,
    handle TEXT NOT NULL UNIQUE,
    display_name TEXT,
    status TEXT NOT NULL CHECK (status IN ('active', 'paused', 'retired')),
    demo INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL
  );
  CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL REFERENCES agents(id),
    prefix TEXT NOT NULL,
    secret_hash TEXT NOT NULL UNIQUE,
    scopes TEXT NOT NULL,
    created_at TEXT NOT NULL,
    revoked_at TEXT
  );
  CREATE INDEX api_keys_agent ON api_keys(agent_id);
  CREATE TABLE signing_keys (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL REFERENCES agents(id),
    public_key TEXT NOT NULL,
    label TEXT NOT NULL,
    created_at TEXT NOT NULL,
    revoked_at TEXT,
    UNIQUE (agent_id, public_key)
  );
  CREATE TABLE chain_heads (
    agent_id TEXT PRIMARY KEY REFERENCES agents(id),
    seq INTEGER NOT NULL,
    hash TEXT NOT NULL,
    recorded_at TEXT
  );
  CREATE TABLE records (
    id TEXT PRIMARY KEY,
    sort_key TEXT NOT NULL UNIQUE,
    agent_id TEXT NOT NULL REFERENCES agents(id),
    type TEXT NOT NULL,
    chain_seq INTEGER NOT NULL,
    recorded_at TEXT NOT NULL,
    symbol TEXT,
    content TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    chain_hash TEXT NOT NULL,
    signature TEXT,
    link_token TEXT UNIQUE,
    UNIQUE (agent_id, chain_seq)
  );
  CREATE INDEX records_agent_type ON records(agent_id, type, sort_key);
  CREATE TRIGGER records_no_update BEFORE UPDATE ON records
    BEGIN SELECT RAISE(ABORT, 'record_is_immutable'); END;
  CREATE TRIGGER records_no_delete BEFORE DELETE ON records
    BEGIN SELECT RAISE(ABORT, 'record_is_immutable'); END;
  CREATE TABLE idempotency_keys (
    agent_id TEXT NOT NULL,
    key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    record_id TEXT NOT NULL,
    status INTEGER NOT NULL,
    body TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (agent_id, key)
  );
  CREATE TABLE nonces (
    agent_id TEXT NOT NULL,
    nonce TEXT NOT NULL,
    record_id TEXT NOT NULL,
    PRIMARY KEY (agent_id, nonce)
  );
  `,
  // Public reads: the ledger's filters, each newest first by sort key.
  `
  CREATE INDEX records_symbol_sort ON records(symbol, sort_key);
  CREATE INDEX records_agent_sort ON records(agent_id, sort_key);
  CREATE INDEX records_type_sort ON records(type, sort_key);
  `,
  // Fewer indexes to update per append: an agent's records of one type are found through
  // records_agent_sort (agent_id, sort_key), filtered by type.
  `
  DROP INDEX records_agent_type;
  `,
  // Counts by record type kept on the chain head, so profiles and transparency never count rows.
  `
  ALTER TABLE chain_heads ADD COLUMN decision_count INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE chain_heads ADD COLUMN execution_count INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE chain_heads ADD COLUMN signed_count INTEGER NOT NULL DEFAULT 0;
  UPDATE chain_heads SET
    decision_count = (SELECT COUNT(*) FROM records r WHERE r.agent_id = chain_heads.agent_id AND r.type = 'decision'),
    execution_count = (SELECT COUNT(*) FROM records r WHERE r.agent_id = chain_heads.agent_id AND r.type = 'execution'),
    signed_count = (SELECT COUNT(*) FROM records r WHERE r.agent_id = chain_heads.agent_id AND r.signature IS NOT NULL);
  `,
  // A nonce is one B-tree entry, not a row plus an index entry.
  `
  CREATE TABLE nonces_by_agent (
    agent_id TEXT NOT NULL,
    nonce TEXT NOT NULL,
    record_id TEXT NOT NULL,
    PRIMARY KEY (agent_id, nonce)
  ) WITHOUT ROWID;
  INSERT INTO nonces_by_agent (agent_id, nonce, record_id) SELECT agent_id, nonce, record_id FROM nonces;
  DROP TABLE nonces;
  ALTER TABLE nonces_by_agent RENAME TO nonces;
  `,
  // A chain head only advances, and only to the agent's newest record: moving it back would hide
  // records from /chain and /export while what is left still verifies.
  `
  CREATE TRIGGER chain_heads_only_advance BEFORE UPDATE OF seq, hash ON chain_heads
  WHEN NEW.seq < OLD.seq
    OR (NEW.seq = OLD.seq AND NEW.hash <> OLD.hash)
    OR (NEW.seq > OLD.seq AND (
      NOT EXISTS (SELECT 1 FROM records WHERE agent_id = NEW.agent_id AND chain_seq = NEW.seq AND chain_hash = NEW.hash)
      OR EXISTS (SELECT 1 FROM records WHERE agent_id = NEW.agent_id AND chain_seq > NEW.seq)))
  BEGIN
    SELECT RAISE(ABORT, 'chain_heads: a head only advances, to the agent''s newest record');
  END;
  CREATE TRIGGER chain_heads_no_delete BEFORE DELETE ON chain_heads
  BEGIN
    SELECT RAISE(ABORT, 'chain_heads: a head is never deleted');
  END;
  `,
  // Broker connections: connections with sealed credentials, the SnapTrade user of each
  // agent, the index of imported fills (each recorded once; its link), position snapshots.
  `
  CREATE TABLE broker_connections (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL REFERENCES agents(id),
    kind TEXT NOT NULL,
    environment TEXT,
    status TEXT NOT NULL,
    credentials TEXT,
    key_version INTEGER,
    accounts TEXT NOT NULL,
    external_id TEXT,
    cursor TEXT NOT NULL,
    last_sync TEXT,
    progress TEXT,
    last_error TEXT,
    state_hash TEXT UNIQUE,
    state_expires_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    disconnected_at TEXT
  );
  CREATE INDEX broker_connections_agent ON broker_connections(agent_id);
  CREATE TABLE broker_users (
    agent_id TEXT NOT NULL REFERENCES agents(id),
    kind TEXT NOT NULL,
    user_id TEXT NOT NULL,
    secret TEXT NOT NULL,
    key_version INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (agent_id, kind)
  );
  CREATE TABLE broker_fills (
    agent_id TEXT NOT NULL,
    fill_key TEXT NOT NULL,
    connection_id TEXT NOT NULL,
    record_id TEXT NOT NULL,
    order_key TEXT NOT NULL,
    broker_order_id TEXT,
    symbol TEXT NOT NULL,
    side TEXT NOT NULL,
    quantity TEXT NOT NULL,
    cumulative_quantity TEXT,
    decision_id TEXT,
    link_method TEXT,
    PRIMARY KEY (agent_id, fill_key)
  );
  CREATE INDEX broker_fills_connection ON broker_fills(connection_id);
  CREATE INDEX broker_fills_order ON broker_fills(agent_id, broker_order_id);
  CREATE INDEX broker_fills_decision ON broker_fills(decision_id);
  CREATE TABLE broker_snapshots (
    connection_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    taken_at TEXT NOT NULL,
    positions TEXT NOT NULL,
    balances TEXT NOT NULL,
    reconciliation TEXT NOT NULL,
    PRIMARY KEY (connection_id, taken_at)
  );
  `,
  // The global log (log_v1): leaves, the tree as hash tiles, signed checkpoints. Leaves and
  // checkpoints are append-only like records; a tile is rewritten only to grow (partial to wider).
  `
  CREATE TABLE log_leaves (
    log_index INTEGER PRIMARY KEY,
    record_id TEXT NOT NULL UNIQUE REFERENCES records(id),
    sort_key TEXT NOT NULL
  );
  CREATE TABLE log_tiles (
    level INTEGER NOT NULL,
    tile_index INTEGER NOT NULL,
    hashes BLOB NOT NULL,
    PRIMARY KEY (level, tile_index)
  ) WITHOUT ROWID;
  CREATE TABLE log_checkpoints (
    tree_size INTEGER PRIMARY KEY,
    root BLOB NOT NULL,
    note TEXT NOT NULL,
    vkey TEXT NOT NULL,
    created_at TEXT NOT NULL
  );
  CREATE TRIGGER log_leaves_no_update BEFORE UPDATE ON log_leaves
    BEGIN SELECT RAISE(ABORT, 'log_is_append_only'); END;
  CREATE TRIGGER log_leaves_no_delete BEFORE DELETE ON log_leaves
    BEGIN SELECT RAISE(ABORT, 'log_is_append_only'); END;
  CREATE TRIGGER log_checkpoints_no_update BEFORE UPDATE ON log_checkpoints
    BEGIN SELECT RAISE(ABORT, 'log_is_append_only'); END;
  CREATE TRIGGER log_checkpoints_no_delete BEFORE DELETE ON log_checkpoints
    BEGIN SELECT RAISE(ABORT, 'log_is_append_only'); END;
  `,
  // Bitcoin anchors of checkpoints (log_v1 §5): one row per anchored tree size, its .ots file
  // (pending, later upgraded), and since when no calendar answers.
  `
  CREATE TABLE log_anchors (
    tree_size INTEGER PRIMARY KEY REFERENCES log_checkpoints(tree_size),
    root TEXT NOT NULL,
    digest BLOB NOT NULL,
    ots BLOB NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'confirmed')),
    calendars TEXT NOT NULL,
    block_height INTEGER,
    block_hash TEXT,
    block_merkle_root TEXT,
    block_time INTEGER,
    created_at TEXT NOT NULL,
    last_attempt_at TEXT,
    last_error TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT
  );
  CREATE INDEX log_anchors_status ON log_anchors (status, tree_size);
  CREATE TABLE log_anchor_state (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    calendars_unreachable_since TEXT
  );
  INSERT INTO log_anchor_state (id, calendars_unreachable_since) VALUES (1, NULL);
  `,
  // Executions by link method per agent, counted for the `verified` badge: an index-only count.
  `
  CREATE INDEX broker_fills_agent_link ON broker_fills(agent_id, link_method, record_id);
  `,
  // Market data: the price observed at each decision's receipt (one per decision,
  // append-only like the log, counted per agent by trigger for the export's ETag), the pricing
  // job's scan cursor (every decision before it is observed), cached daily closes and stored
  // performance reports (both replaceable).
  `
  CREATE TABLE price_observations (
    record_id TEXT PRIMARY KEY REFERENCES records(id),
    agent_id TEXT NOT NULL,
    chain_seq INTEGER NOT NULL,
    symbol TEXT NOT NULL,
    asked_at TEXT NOT NULL,
    observed_at TEXT NOT NULL,
    source TEXT NOT NULL,
    feed TEXT,
    synthetic INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('priced', 'unpriced')),
    price TEXT,
    provider_time TEXT,
    age_ms INTEGER,
    stale INTEGER,
    reason TEXT,
    CHECK ((status = 'priced' AND price IS NOT NULL AND provider_time IS NOT NULL AND age_ms IS NOT NULL AND stale IS NOT NULL AND reason IS NULL)
      OR (status = 'unpriced' AND price IS NULL AND provider_time IS NULL AND age_ms IS NULL AND stale IS NULL AND reason IS NOT NULL))
  );
  CREATE INDEX price_observations_agent ON price_observations(agent_id, chain_seq);
  CREATE TRIGGER price_observations_no_update BEFORE UPDATE ON price_observations
    BEGIN SELECT RAISE(ABORT, 'price_observations_are_append_only'); END;
  CREATE TRIGGER price_observations_no_delete BEFORE DELETE ON price_observations
    BEGIN SELECT RAISE(ABORT, 'price_observations_are_append_only'); END;
  CREATE TABLE price_counts (
    agent_id TEXT PRIMARY KEY,
    observations INTEGER NOT NULL
  );
  CREATE TRIGGER price_observations_count AFTER INSERT ON price_observations
  BEGIN
    INSERT OR IGNORE INTO price_counts (agent_id, observations) VALUES (NEW.agent_id, 0);
    UPDATE price_counts SET observations = observations + 1 WHERE agent_id = NEW.agent_id;
  END;
  CREATE TABLE price_scan (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    sort_key TEXT NOT NULL
  );
  CREATE TABLE market_closes (
    source TEXT NOT NULL,
    symbol TEXT NOT NULL,
    date TEXT NOT NULL,
    close TEXT NOT NULL,
    PRIMARY KEY (source, symbol, date)
  ) WITHOUT ROWID;
  CREATE TABLE performance_reports (
    agent_id TEXT NOT NULL REFERENCES agents(id),
    portfolio TEXT NOT NULL CHECK (portfolio IN ('model', 'broker')),
    through_seq INTEGER NOT NULL,
    as_of TEXT NOT NULL,
    computed_at TEXT NOT NULL,
    report TEXT NOT NULL,
    PRIMARY KEY (agent_id, portfolio)
  );
  `,
  // Webhooks: the agents' endpoints (secret sealed by the vault), the outbox of messages
  // in fan-out order (seq), their delivery attempts, the fan-out cursor (one row, created with the
  // first endpoint) and the confirmed anchors already fanned out. Not record tables: the deliverer
  // updates messages and prunes old ones.
  `
  CREATE TABLE webhook_endpoints (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL REFERENCES agents(id),
    url TEXT NOT NULL,
    events TEXT NOT NULL,
    description TEXT,
    secret TEXT NOT NULL,
    key_version INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('active', 'disabled')),
    disabled_reason TEXT,
    created_at TEXT NOT NULL,
    disabled_at TEXT
  );
  CREATE INDEX webhook_endpoints_agent ON webhook_endpoints (agent_id, created_at);
  CREATE TABLE webhook_cursor (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    record_sort_key TEXT NOT NULL,
    checkpoint_size INTEGER NOT NULL,
    anchor_floor INTEGER NOT NULL
  );
  CREATE TABLE webhook_anchors_seen (
    tree_size INTEGER PRIMARY KEY
  );
  CREATE TABLE webhook_messages (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints(id),
    agent_id TEXT NOT NULL,
    event_type TEXT NOT NULL,
    subject TEXT NOT NULL,
    payload TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    first_attempt_at TEXT,
    next_attempt_at TEXT,
    delivered_at TEXT,
    UNIQUE (endpoint_id, event_type, subject)
  );
  CREATE INDEX webhook_messages_endpoint ON webhook_messages (endpoint_id, seq);
  CREATE INDEX webhook_messages_pending ON webhook_messages (endpoint_id, seq) WHERE status = 'pending';
  CREATE INDEX webhook_messages_created ON webhook_messages (created_at) WHERE status <> 'pending';
  CREATE TABLE webhook_attempts (
    message_id TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    endpoint_id TEXT NOT NULL,
    started_at TEXT NOT NULL,
    duration_ms INTEGER NOT NULL,
    status_code INTEGER,
    error TEXT,
    PRIMARY KEY (message_id, attempt)
  );
  `,
  // Priced decisions: each observed decision's terms beside its observation, one narrow
  // row in chain order, so a performance report from scratch reads one table and parses no content.
  // A projection of records and observations: filled by trigger with each observation, backfilled
  // here, append-only like both. A term is text, or null when absent or not a JSON string.
  `
  CREATE TABLE priced_decisions (
    agent_id TEXT NOT NULL,
    chain_seq INTEGER NOT NULL,
    record_id TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    symbol TEXT NOT NULL,
    action TEXT,
    target_allocation_pct TEXT,
    quantity TEXT,
    notional TEXT,
    time_horizon TEXT,
    status TEXT NOT NULL,
    price TEXT,
    reason TEXT,
    source TEXT NOT NULL,
    feed TEXT,
    synthetic INTEGER NOT NULL,
    PRIMARY KEY (agent_id, chain_seq)
  ) WITHOUT ROWID;
  CREATE TRIGGER priced_decisions_no_update BEFORE UPDATE ON priced_decisions
    BEGIN SELECT RAISE(ABORT, 'priced_decisions_are_append_only'); END;
  CREATE TRIGGER priced_decisions_no_delete BEFORE DELETE ON priced_decisions
    BEGIN SELECT RAISE(ABORT, 'priced_decisions_are_append_only'); END;
  CREATE TRIGGER price_observations_project AFTER INSERT ON price_observations
  BEGIN
    ${pricedDecisionsFrom('o.record_id = NEW.record_id')};
  END;
  ${pricedDecisionsFrom('1 = 1')};
  `,
  // Master key checks: per key version of the vault's keyring, a check value (an HMAC of
  // a constant under that key), written the first time a version is used. The service refuses to
  // start with a keyring whose key for a version differs. Append-only: a version's key never changes.
  `
  CREATE TABLE master_key_checks (
    version INTEGER PRIMARY KEY,
    check_value TEXT NOT NULL,
    created_at TEXT NOT NULL
  );
  CREATE TRIGGER master_key_checks_no_update BEFORE UPDATE ON master_key_checks
    BEGIN SELECT RAISE(ABORT, 'master_key_checks_are_append_only'); END;
  CREATE TRIGGER master_key_checks_no_delete BEFORE DELETE ON master_key_checks
    BEGIN SELECT RAISE(ABORT, 'master_key_checks_are_append_only'); END;
  `,
  // Raw prices and corporate actions as facts. market_raw_closes: each unadjusted daily
  // close as the provider first answered it, with its source and when it was fetched; insert if
  // absent, never changed (the split-adjusted market_closes cache is no longer read or written).
  // corporate_actions: each action as its provider stated it, one row per revision of its
  // provider id: a correction is a new row (revision + 1) that supersedes the earlier ones, which
  // stay. Both append-only like the observations.
  `
  CREATE TABLE market_raw_closes (
    source TEXT NOT NULL,
    symbol TEXT NOT NULL,
    date TEXT NOT NULL,
    close TEXT NOT NULL,
    fetched_at TEXT NOT NULL,
    PRIMARY KEY (source, symbol, date)
  ) WITHOUT ROWID;
  CREATE TRIGGER market_raw_closes_no_update BEFORE UPDATE ON market_raw_closes
    BEGIN SELECT RAISE(ABORT, 'market_raw_closes_are_append_only'); END;
  CREATE TRIGGER market_raw_closes_no_delete BEFORE DELETE ON market_raw_closes
    BEGIN SELECT RAISE(ABORT, 'market_raw_closes_are_append_only'); END;
  CREATE TABLE corporate_actions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    source TEXT NOT NULL,
    provider_id TEXT NOT NULL,
    revision INTEGER NOT NULL CHECK (revision >= 1),
    type TEXT NOT NULL,
    symbol TEXT NOT NULL,
    ex_date TEXT,
    payable_date TEXT,
    process_date TEXT,
    record_date TEXT,
    old_rate TEXT,
    new_rate TEXT,
    rate TEXT,
    special INTEGER,
    raw TEXT NOT NULL,
    seen_at TEXT NOT NULL,
    UNIQUE (source, provider_id, revision)
  );
  CREATE INDEX corporate_actions_symbol ON corporate_actions (source, symbol, id);
  CREATE TRIGGER corporate_actions_no_update BEFORE UPDATE ON corporate_actions
    BEGIN SELECT RAISE(ABORT, 'corporate_actions_are_append_only'); END;
  CREATE TRIGGER corporate_actions_no_delete BEFORE DELETE ON corporate_actions
    BEGIN SELECT RAISE(ABORT, 'corporate_actions_are_append_only'); END;
  `,
  // The directory: agent_headlines, a projection of each agent's headline figures (its
  // chain head's counts, its link counts and its stored model and broker reports) written by the
  // directory job (src/directory/job.ts), one current row per agent; a row replaced is kept,
  // marked superseded at the version that replaced it, for DIRECTORY_CURSOR_TTL, so a listing paged
  // from version V reads the board as it was at V (no agent skipped or repeated). k_* are the sort
  // keys, ascending, ties by agent_id (src/directory/rules.ts); agent_headlines_counts covers what the
  // board's counts read, so counting is a pass over that index, not over the rows. A projection, not facts: rows are
  // replaced and pruned; rebuilt from the facts by the job (not copied by `ledger migrate`).
  // agent_headlines_board: the board's version (one more per projection), when it was last
  // projected, and the highest version whose superseded rows were pruned.
  `
  CREATE TABLE agent_headlines (
    agent_id TEXT NOT NULL REFERENCES agents(id),
    version INTEGER NOT NULL,
    superseded_version INTEGER,
    superseded_at TEXT,
    projected_at TEXT NOT NULL,
    handle TEXT NOT NULL,
    display_name TEXT,
    status TEXT NOT NULL,
    demo INTEGER NOT NULL,
    synthetic INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    records INTEGER NOT NULL,
    decisions INTEGER NOT NULL,
    executions INTEGER NOT NULL,
    signed INTEGER NOT NULL,
    linked INTEGER NOT NULL,
    first_record_at TEXT,
    last_record_at TEXT,
    history_days INTEGER,
    figures TEXT NOT NULL,
    model_computed_at TEXT,
    broker_computed_at TEXT,
    k_excess_return REAL NOT NULL,
    k_sharpe REAL NOT NULL,
    k_records REAL NOT NULL,
    k_newest REAL NOT NULL,
    k_last_active REAL NOT NULL,
    PRIMARY KEY (agent_id, version)
  );
  CREATE INDEX agent_headlines_excess ON agent_headlines (k_excess_return, agent_id);
  CREATE INDEX agent_headlines_sharpe ON agent_headlines (k_sharpe, agent_id);
  CREATE INDEX agent_headlines_records ON agent_headlines (k_records, agent_id);
  CREATE INDEX agent_headlines_newest ON agent_headlines (k_newest, agent_id);
  CREATE INDEX agent_headlines_last_active ON agent_headlines (k_last_active, agent_id);
  CREATE INDEX agent_headlines_superseded ON agent_headlines (superseded_version) WHERE superseded_version IS NOT NULL;
  CREATE UNIQUE INDEX agent_headlines_current ON agent_headlines (agent_id) WHERE superseded_version IS NULL;
  CREATE INDEX agent_headlines_counts ON agent_headlines (version, superseded_version, demo, synthetic, status, history_days,
    decisions, signed, executions, linked, k_excess_return, k_sharpe);
  CREATE TABLE agent_headlines_board (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    version INTEGER NOT NULL,
    projected_at TEXT,
    pruned_through INTEGER NOT NULL
  );
  INSERT INTO agent_headlines_board (id, version, projected_at, pruned_through) VALUES (1, 0, NULL, 0);
  `,
  // Witness cosignatures of the log's checkpoints (docs/witnesses.md): every verified
  // cosignature line received, one per (checkpoint, witness vkey), append-only like the
  // checkpoints; and per witness the state of asking it (last attempt and error, next attempt),
  // which is state, not a fact, so it changes.
  `
  CREATE TABLE log_cosignatures (
    tree_size INTEGER NOT NULL REFERENCES log_checkpoints(tree_size),
    witness TEXT NOT NULL,
    line TEXT NOT NULL,
    cosigned_at INTEGER NOT NULL,
    received_at TEXT NOT NULL,
    PRIMARY KEY (tree_size, witness)
  ) WITHOUT ROWID;
  CREATE INDEX log_cosignatures_witness ON log_cosignatures (witness, tree_size);
  CREATE TRIGGER log_cosignatures_no_update BEFORE UPDATE ON log_cosignatures
    BEGIN SELECT RAISE(ABORT, 'log_cosignatures_are_append_only'); END;
  CREATE TRIGGER log_cosignatures_no_delete BEFORE DELETE ON log_cosignatures
    BEGIN SELECT RAISE(ABORT, 'log_cosignatures_are_append_only'); END;
  CREATE TABLE log_witness_attempts (
    witness TEXT PRIMARY KEY,
    last_attempt_at TEXT NOT NULL,
    last_error TEXT,
    last_error_at TEXT,
    failures INTEGER NOT NULL,
    next_attempt_at TEXT
  );
  `,
  // Broker account activities: the record count of the new record type on each
  // chain head, and the index of imported non-trade activities (each key once per agent: which
  // record it became), append-only like the records it points to.
  `
  ALTER TABLE chain_heads ADD COLUMN activity_count INTEGER NOT NULL DEFAULT 0;
  UPDATE chain_heads SET activity_count = (SELECT COUNT(*) FROM records r WHERE r.agent_id = chain_heads.agent_id AND r.type = 'activity');
  CREATE TABLE broker_activities (
    agent_id TEXT NOT NULL,
    activity_key TEXT NOT NULL,
    connection_id TEXT NOT NULL,
    record_id TEXT NOT NULL,
    PRIMARY KEY (agent_id, activity_key)
  ) WITHOUT ROWID;
  CREATE INDEX broker_activities_connection ON broker_activities(connection_id, record_id);
  CREATE TRIGGER broker_activities_no_update BEFORE UPDATE ON broker_activities
    BEGIN SELECT RAISE(ABORT, 'broker_activities_are_append_only'); END;
  CREATE TRIGGER broker_activities_no_delete BEFORE DELETE ON broker_activities
    BEGIN SELECT RAISE(ABORT, 'broker_activities_are_append_only'); END;
  `,
  // The anchoring job's round reads the pending anchors that are due, not all of them: during a
  // calendar or Bitcoin outage they pile up, one per interval, each with its .ots file.
  `
  CREATE INDEX log_anchors_due ON log_anchors (next_attempt_at, tree_size) WHERE status = 'pending';
  `,
  // The days whose corporate actions the pricing job asked each provider about, by symbol (state,
  // widened by each request, not a fact): a report says "total return" only for days covered.
  `
  CREATE TABLE market_actions_known (
    source TEXT NOT NULL,
    symbol TEXT NOT NULL,
    from_date TEXT NOT NULL,
    through_date TEXT NOT NULL,
    PRIMARY KEY (source, symbol)
  ) WITHOUT ROWID;
  `,
  // The anchors by status, counted as they are written (one row per status), so the transparency
  // report and the home page never count the anchors, one more per interval for ever (issue 43).
  `
  CREATE TABLE log_anchor_counts (
    status TEXT PRIMARY KEY,
    anchors INTEGER NOT NULL
  );
  INSERT INTO log_anchor_counts (status, anchors) SELECT status, COUNT(*) FROM log_anchors GROUP BY status;
  CREATE TRIGGER log_anchors_count_insert AFTER INSERT ON log_anchors
  BEGIN
    INSERT OR IGNORE INTO log_anchor_counts (status, anchors) VALUES (NEW.status, 0);
    UPDATE log_anchor_counts SET anchors = anchors + 1 WHERE status = NEW.status;
  END;
  CREATE TRIGGER log_anchors_count_update AFTER UPDATE OF status ON log_anchors WHEN OLD.status <> NEW.status
  BEGIN
    UPDATE log_anchor_counts SET anchors = anchors - 1 WHERE status = OLD.status;
    INSERT OR IGNORE INTO log_anchor_counts (status, anchors) VALUES (NEW.status, 0);
    UPDATE log_anchor_counts SET anchors = anchors + 1 WHERE status = NEW.status;
  END;
  CREATE TRIGGER log_anchors_count_delete AFTER DELETE ON log_anchors
  BEGIN
    UPDATE log_anchor_counts SET anchors = anchors - 1 WHERE status = OLD.status;
  END;
  `,
];

/** The priced_decisions rows of the observations matching `where` (o: price_observations). */
function pricedDecisionsFrom(where: string): string {
  const term = (name: string) => `CASE json_type(r.content, '$.${name}') WHEN 'text' THEN json_extract(r.content, '$.${name}') END`;
  return `INSERT INTO priced_decisions (agent_id, chain_seq, record_id, recorded_at, symbol, action, target_allocation_pct, quantity,
      notional, time_horizon, status, price, reason, source, feed, synthetic)
    SELECT r.agent_id, r.chain_seq, r.id, r.recorded_at, COALESCE(${term('symbol')}, r.symbol, ''), ${term('action')},
      ${term('target_allocation_pct')}, ${term('quantity')}, ${term('notional')}, ${term('time_horizon')},
      o.status, o.price, o.reason, o.source, o.feed, o.synthetic
    FROM price_observations o JOIN records r ON r.id = o.record_id
    WHERE ${where} AND r.type = 'decision'`;
}
