// PostgreSQL schema, as ordered migrations. A migration never changes once released; add a new one.
// Every per-agent table carries agent_id so the schema can be distributed by agent.
export const POSTGRES_MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE agents (
    id TEXT PRIMARY KEY,
    handle TEXT NOT NULL UNIQUE,
    display_name TEXT,
    status TEXT NOT NULL CHECK (status IN ('active', 'paused', 'retired')),
    demo BOOLEAN NOT NULL DEFAULT FALSE,
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
    seq BIGINT NOT NULL,
    hash TEXT NOT NULL,
    recorded_at TEXT
  );
  CREATE TABLE records (
    id TEXT PRIMARY KEY,
    sort_key TEXT NOT NULL UNIQUE,
    agent_id TEXT NOT NULL REFERENCES agents(id),
    type TEXT NOT NULL,
    chain_seq BIGINT NOT NULL,
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
  CREATE FUNCTION records_are_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'record_is_immutable'; END $$;
  CREATE TRIGGER records_no_change BEFORE UPDATE OR DELETE ON records
    FOR EACH ROW EXECUTE FUNCTION records_are_immutable();
  CREATE TRIGGER records_no_truncate BEFORE TRUNCATE ON records
    FOR EACH STATEMENT EXECUTE FUNCTION records_are_immutable();
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
  ALTER TABLE chain_heads ADD COLUMN decision_count BIGINT NOT NULL DEFAULT 0;
  ALTER TABLE chain_heads ADD COLUMN execution_count BIGINT NOT NULL DEFAULT 0;
  ALTER TABLE chain_heads ADD COLUMN signed_count BIGINT NOT NULL DEFAULT 0;
  UPDATE chain_heads SET
    decision_count = (SELECT COUNT(*) FROM records r WHERE r.agent_id = chain_heads.agent_id AND r.type = 'decision'),
    execution_count = (SELECT COUNT(*) FROM records r WHERE r.agent_id = chain_heads.agent_id AND r.type = 'execution'),
    signed_count = (SELECT COUNT(*) FROM records r WHERE r.agent_id = chain_heads.agent_id AND r.signature IS NOT NULL);
  `,
  // A chain head only advances, and only to the agent's newest record: moving it back would hide
  // records from /chain and /export while what is left still verifies.
  `
  CREATE FUNCTION chain_heads_only_advance() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF TG_OP = 'DELETE' THEN
      RAISE EXCEPTION 'chain_heads: a head is never deleted';
    END IF;
    IF NEW.seq < OLD.seq
      OR (NEW.seq = OLD.seq AND NEW.hash <> OLD.hash)
      OR (NEW.seq > OLD.seq AND (
        NOT EXISTS (SELECT 1 FROM records WHERE agent_id = NEW.agent_id AND chain_seq = NEW.seq AND chain_hash = NEW.hash)
        OR EXISTS (SELECT 1 FROM records WHERE agent_id = NEW.agent_id AND chain_seq > NEW.seq))) THEN
      RAISE EXCEPTION 'chain_heads: a head only advances, to the agent''s newest record';
    END IF;
    RETURN NEW;
  END $$;
  CREATE TRIGGER chain_heads_only_advance BEFORE UPDATE OR DELETE ON chain_heads
    FOR EACH ROW EXECUTE FUNCTION chain_heads_only_advance();
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
    log_index BIGINT PRIMARY KEY,
    record_id TEXT NOT NULL UNIQUE REFERENCES records(id),
    sort_key TEXT NOT NULL
  );
  CREATE TABLE log_tiles (
    level INTEGER NOT NULL,
    tile_index BIGINT NOT NULL,
    hashes BYTEA NOT NULL,
    PRIMARY KEY (level, tile_index)
  );
  CREATE TABLE log_checkpoints (
    tree_size BIGINT PRIMARY KEY,
    root BYTEA NOT NULL,
    note TEXT NOT NULL,
    vkey TEXT NOT NULL,
    created_at TEXT NOT NULL
  );
  CREATE FUNCTION log_is_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'log_is_append_only'; END $$;
  CREATE TRIGGER log_leaves_no_change BEFORE UPDATE OR DELETE ON log_leaves
    FOR EACH ROW EXECUTE FUNCTION log_is_append_only();
  CREATE TRIGGER log_checkpoints_no_change BEFORE UPDATE OR DELETE ON log_checkpoints
    FOR EACH ROW EXECUTE FUNCTION log_is_append_only();
  `,
  // Bitcoin anchors of checkpoints (log_v1 §5): one row per anchored tree size, its .ots file
  // (pending, later upgraded), and since when no calendar answers.
  `
  CREATE TABLE log_anchors (
    tree_size BIGINT PRIMARY KEY REFERENCES log_checkpoints(tree_size),
    root TEXT NOT NULL,
    digest BYTEA NOT NULL,
    ots BYTEA NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'confirmed')),
    calendars TEXT NOT NULL,
    block_height BIGINT,
    block_hash TEXT,
    block_merkle_root TEXT,
    block_time BIGINT,
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
    chain_seq BIGINT NOT NULL,
    symbol TEXT NOT NULL,
    asked_at TEXT NOT NULL,
    observed_at TEXT NOT NULL,
    source TEXT NOT NULL,
    feed TEXT,
    synthetic BOOLEAN NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('priced', 'unpriced')),
    price TEXT,
    provider_time TEXT,
    age_ms BIGINT,
    stale BOOLEAN,
    reason TEXT,
    CHECK ((status = 'priced' AND price IS NOT NULL AND provider_time IS NOT NULL AND age_ms IS NOT NULL AND stale IS NOT NULL AND reason IS NULL)
      OR (status = 'unpriced' AND price IS NULL AND provider_time IS NULL AND age_ms IS NULL AND stale IS NULL AND reason IS NOT NULL))
  );
  CREATE INDEX price_observations_agent ON price_observations(agent_id, chain_seq);
  CREATE FUNCTION price_observations_are_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'price_observations_are_append_only'; END $$;
  CREATE TRIGGER price_observations_no_change BEFORE UPDATE OR DELETE ON price_observations
    FOR EACH ROW EXECUTE FUNCTION price_observations_are_append_only();
  CREATE TRIGGER price_observations_no_truncate BEFORE TRUNCATE ON price_observations
    FOR EACH STATEMENT EXECUTE FUNCTION price_observations_are_append_only();
  CREATE TABLE price_counts (
    agent_id TEXT PRIMARY KEY,
    observations BIGINT NOT NULL
  );
  CREATE FUNCTION price_observations_count() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO price_counts (agent_id, observations) SELECT agent_id, COUNT(*) FROM inserted GROUP BY agent_id
      ON CONFLICT (agent_id) DO UPDATE SET observations = price_counts.observations + excluded.observations;
    RETURN NULL;
  END $$;
  CREATE TRIGGER price_observations_count AFTER INSERT ON price_observations
    REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION price_observations_count();
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
  );
  CREATE TABLE performance_reports (
    agent_id TEXT NOT NULL REFERENCES agents(id),
    portfolio TEXT NOT NULL CHECK (portfolio IN ('model', 'broker')),
    through_seq BIGINT NOT NULL,
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
    checkpoint_size BIGINT NOT NULL,
    anchor_floor BIGINT NOT NULL
  );
  CREATE TABLE webhook_anchors_seen (
    tree_size BIGINT PRIMARY KEY
  );
  CREATE TABLE webhook_messages (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
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
    chain_seq BIGINT NOT NULL,
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
    synthetic BOOLEAN NOT NULL,
    PRIMARY KEY (agent_id, chain_seq)
  );
  CREATE FUNCTION priced_decisions_are_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'priced_decisions_are_append_only'; END $$;
  CREATE TRIGGER priced_decisions_no_change BEFORE UPDATE OR DELETE ON priced_decisions
    FOR EACH ROW EXECUTE FUNCTION priced_decisions_are_append_only();
  CREATE TRIGGER priced_decisions_no_truncate BEFORE TRUNCATE ON priced_decisions
    FOR EACH STATEMENT EXECUTE FUNCTION priced_decisions_are_append_only();
  CREATE FUNCTION price_observations_project() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    ${pricedDecisionsFrom('inserted')};
    RETURN NULL;
  END $$;
  CREATE TRIGGER price_observations_project AFTER INSERT ON price_observations
    REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION price_observations_project();
  ${pricedDecisionsFrom('price_observations')};
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
  CREATE FUNCTION master_key_checks_are_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'master_key_checks_are_append_only'; END $$;
  CREATE TRIGGER master_key_checks_no_change BEFORE UPDATE OR DELETE ON master_key_checks
    FOR EACH ROW EXECUTE FUNCTION master_key_checks_are_append_only();
  CREATE TRIGGER master_key_checks_no_truncate BEFORE TRUNCATE ON master_key_checks
    FOR EACH STATEMENT EXECUTE FUNCTION master_key_checks_are_append_only();
  `,
  // Raw prices and corporate actions as facts: see the SQLite migration.
  `
  CREATE TABLE market_raw_closes (
    source TEXT NOT NULL,
    symbol TEXT NOT NULL,
    date TEXT NOT NULL,
    close TEXT NOT NULL,
    fetched_at TEXT NOT NULL,
    PRIMARY KEY (source, symbol, date)
  );
  CREATE FUNCTION market_raw_closes_are_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'market_raw_closes_are_append_only'; END $$;
  CREATE TRIGGER market_raw_closes_no_change BEFORE UPDATE OR DELETE ON market_raw_closes
    FOR EACH ROW EXECUTE FUNCTION market_raw_closes_are_append_only();
  CREATE TRIGGER market_raw_closes_no_truncate BEFORE TRUNCATE ON market_raw_closes
    FOR EACH STATEMENT EXECUTE FUNCTION market_raw_closes_are_append_only();
  CREATE TABLE corporate_actions (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
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
    special BOOLEAN,
    raw TEXT NOT NULL,
    seen_at TEXT NOT NULL,
    UNIQUE (source, provider_id, revision)
  );
  CREATE INDEX corporate_actions_symbol ON corporate_actions (source, symbol, id);
  CREATE FUNCTION corporate_actions_are_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'corporate_actions_are_append_only'; END $$;
  CREATE TRIGGER corporate_actions_no_change BEFORE UPDATE OR DELETE ON corporate_actions
    FOR EACH ROW EXECUTE FUNCTION corporate_actions_are_append_only();
  CREATE TRIGGER corporate_actions_no_truncate BEFORE TRUNCATE ON corporate_actions
    FOR EACH STATEMENT EXECUTE FUNCTION corporate_actions_are_append_only();
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
    version BIGINT NOT NULL,
    superseded_version BIGINT,
    superseded_at TEXT,
    projected_at TEXT NOT NULL,
    handle TEXT NOT NULL,
    display_name TEXT,
    status TEXT NOT NULL,
    demo BOOLEAN NOT NULL,
    synthetic BOOLEAN NOT NULL,
    created_at TEXT NOT NULL,
    records BIGINT NOT NULL,
    decisions BIGINT NOT NULL,
    executions BIGINT NOT NULL,
    signed BIGINT NOT NULL,
    linked BIGINT NOT NULL,
    first_record_at TEXT,
    last_record_at TEXT,
    history_days BIGINT,
    figures TEXT NOT NULL,
    model_computed_at TEXT,
    broker_computed_at TEXT,
    k_excess_return DOUBLE PRECISION NOT NULL,
    k_sharpe DOUBLE PRECISION NOT NULL,
    k_records DOUBLE PRECISION NOT NULL,
    k_newest DOUBLE PRECISION NOT NULL,
    k_last_active DOUBLE PRECISION NOT NULL,
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
    version BIGINT NOT NULL,
    projected_at TEXT,
    pruned_through BIGINT NOT NULL
  );
  INSERT INTO agent_headlines_board (id, version, projected_at, pruned_through) VALUES (1, 0, NULL, 0);
  `,
  // Witness cosignatures of the log's checkpoints (docs/witnesses.md): every verified
  // cosignature line received, one per (checkpoint, witness vkey), append-only like the
  // checkpoints; and per witness the state of asking it (last attempt and error, next attempt),
  // which is state, not a fact, so it changes.
  `
  CREATE TABLE log_cosignatures (
    tree_size BIGINT NOT NULL REFERENCES log_checkpoints(tree_size),
    witness TEXT NOT NULL,
    line TEXT NOT NULL,
    cosigned_at BIGINT NOT NULL,
    received_at TEXT NOT NULL,
    PRIMARY KEY (tree_size, witness)
  );
  CREATE INDEX log_cosignatures_witness ON log_cosignatures (witness, tree_size);
  CREATE FUNCTION log_cosignatures_are_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'log_cosignatures_are_append_only'; END $$;
  CREATE TRIGGER log_cosignatures_no_change BEFORE UPDATE OR DELETE ON log_cosignatures
    FOR EACH ROW EXECUTE FUNCTION log_cosignatures_are_append_only();
  CREATE TRIGGER log_cosignatures_no_truncate BEFORE TRUNCATE ON log_cosignatures
    FOR EACH STATEMENT EXECUTE FUNCTION log_cosignatures_are_append_only();
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
  ALTER TABLE chain_heads ADD COLUMN activity_count BIGINT NOT NULL DEFAULT 0;
  UPDATE chain_heads SET activity_count = (SELECT COUNT(*) FROM records r WHERE r.agent_id = chain_heads.agent_id AND r.type = 'activity');
  CREATE TABLE broker_activities (
    agent_id TEXT NOT NULL,
    activity_key TEXT NOT NULL,
    connection_id TEXT NOT NULL,
    record_id TEXT NOT NULL,
    PRIMARY KEY (agent_id, activity_key)
  );
  CREATE INDEX broker_activities_connection ON broker_activities(connection_id, record_id);
  CREATE FUNCTION broker_activities_are_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'broker_activities_are_append_only'; END $$;
  CREATE TRIGGER broker_activities_no_change BEFORE UPDATE OR DELETE ON broker_activities
    FOR EACH ROW EXECUTE FUNCTION broker_activities_are_append_only();
  CREATE TRIGGER broker_activities_no_truncate BEFORE TRUNCATE ON broker_activities
    FOR EACH STATEMENT EXECUTE FUNCTION broker_activities_are_append_only();
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
  );
  `,
  // The anchors by status, counted as they are written (one row per status), so the transparency
  // report and the home page never count the anchors, one more per interval for ever (issue 43).
  `
  CREATE TABLE log_anchor_counts (
    status TEXT PRIMARY KEY,
    anchors BIGINT NOT NULL
  );
  INSERT INTO log_anchor_counts (status, anchors) SELECT status, COUNT(*) FROM log_anchors GROUP BY status;
  CREATE FUNCTION log_anchors_count() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF TG_OP = 'UPDATE' AND OLD.status = NEW.status THEN RETURN NULL; END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
      UPDATE log_anchor_counts SET anchors = anchors - 1 WHERE status = OLD.status;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
      INSERT INTO log_anchor_counts (status, anchors) VALUES (NEW.status, 1)
        ON CONFLICT (status) DO UPDATE SET anchors = log_anchor_counts.anchors + 1;
    END IF;
    RETURN NULL;
  END $$;
  CREATE TRIGGER log_anchors_count AFTER INSERT OR DELETE OR UPDATE OF status ON log_anchors
    FOR EACH ROW EXECUTE FUNCTION log_anchors_count();
  `,
];

/** The priced_decisions rows of the observations in `observations` (a table: all, or a trigger's new rows). */
function pricedDecisionsFrom(observations: string): string {
  const terms = ['symbol', 'action', 'target_allocation_pct', 'quantity', 'notional', 'time_horizon'];
  const term = (name: string) => `CASE json_typeof(c.${name}) WHEN 'string' THEN c.${name} #>> '{}' END`;
  return `INSERT INTO priced_decisions (agent_id, chain_seq, record_id, recorded_at, symbol, action, target_allocation_pct, quantity,
      notional, time_horizon, status, price, reason, source, feed, synthetic)
    SELECT r.agent_id, r.chain_seq, r.id, r.recorded_at, COALESCE(${term('symbol')}, r.symbol, ''), ${term('action')},
      ${term('target_allocation_pct')}, ${term('quantity')}, ${term('notional')}, ${term('time_horizon')},
      o.status, o.price, o.reason, o.source, o.feed, o.synthetic
    FROM ${observations} o JOIN records r ON r.id = o.record_id
      CROSS JOIN LATERAL json_to_record(r.content::json) AS c(${terms.map((t) => `${t} json`).join(', ')})
    WHERE r.type = 'decision'`;
}
