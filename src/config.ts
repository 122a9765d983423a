// Configuration from the environment. A bad value stops the start with one clear line.
import { DEFAULT_LOOP_SHARE } from './runtime/loop-share.ts';

export type Config = {
  port: number;
  host: string;
  databaseUrl: string;
  /** A PostgreSQL streaming replica the public reads use (docs/operations.md, "Read replicas"); null: the primary. */
  readDatabaseUrl: string | null;
  adminToken: string | null;
  baseUrl: string;
  siteUrl: string;
  redisUrl: string | null;
  writeLimitPerMinute: number;
  readLimitPerMinute: number;
  /** Concurrency bounds of the public reads (docs/operations.md, "Bounds on public reads"). */
  readBounds: ReadBounds;
  logLevel: string;
  /** The global log's Ed25519 key (PKCS#8 PEM); null: generated into the data directory on first start. */
  logKeyFile: string | null;
  /** The global log's origin, also its key name (log_v1 §2). */
  logOrigin: string;
  /** A C2SP tlog-policy file naming the witnesses asked to cosign checkpoints and the quorum (LEDGER_WITNESS_POLICY, docs/witnesses.md); null: none asked. */
  witnessPolicyFile: string | null;
  brokers: BrokerConfig;
  anchor: AnchorConfig;
  metrics: MetricsConfig;
  /** The market-data variables as set (LEDGER_MARKET_DATA, LEDGER_ALPACA_DATA_*, LEDGER_SYNTHETIC_*); src/market/select.ts checks them at start. */
  market: MarketEnv;
  /** Performance (docs/perf_v1.md): the benchmark symbol, LEDGER_BENCHMARK (default SPY). */
  performance: { benchmark: string };
  webhooks: WebhookConfig;
};

/**
 * Prometheus metrics (GET /metrics): off, on the service's own port (LEDGER_METRICS=true), or on
 * a listener of their own (LEDGER_METRICS_PORT, bound to LEDGER_METRICS_HOST), which keeps them
 * off the public port.
 */
export type MetricsConfig = { enabled: boolean; port: number | null; host: string };

/**
 * How many public reads run at once, in all and per client (IP); how many wait for a turn and
 * for how long; how long a refused read is held before its refusal is sent, and how many are held
 * at once (api/tarpit.ts); and how many PostgreSQL connections they may hold (a pool apart from
 * the record path's).
 */
export type ReadBounds = {
  concurrency: number; perClient: number; queue: number; waitMs: number; refusalDelayMs: number; refusalsHeld: number; poolSize: number;
  /** Public reads start (and go on with their next slice) while the event loop was busy less than this percentage of the time (runtime/loop-share.ts); 100: never wait. */
  loopSharePercent: number;
  /** Bytes of answers the read cache keeps while reads queue (api/read-cache.ts); 0 (the default): no cache. */
  cacheBytes: number;
  /** Worker threads that answer the admitted public reads (src/read-threads.ts); 0: the serving thread answers them. */
  threads: number;
  /** Each read thread's heap (V8 old generation), MiB. */
  threadHeapMb: number;
};

export type MarketEnv = Record<string, string | undefined>;

/** Webhook delivery (docs/webhooks.md): receivers on non-public addresses, and bounds of an attempt. */
export type WebhookConfig = { allowPrivate: boolean; timeoutMs: number; retryBaseMs: number; concurrency: number };

/** Bitcoin anchoring of checkpoints (log_v1 §5): the OpenTimestamps calendars, the header source, the cadence. */
export type AnchorConfig = { calendars: string[]; headersUrl: string; intervalS: number };

/** Broker connections: where the brokers are, the master key of the credentials vault, the sync interval. */
export type BrokerConfig = {
  alpacaTradingUrl: string | null;
  snaptradeUrl: string;
  snaptradeClientId: string | null;
  snaptradeConsumerKey: string | null;
  syncIntervalS: number;
  masterKey: string | null;
  masterKeyFile: string | null;
  /** Where a generated master key is kept: the SQLite database's directory, else ./data. */
  dataDir: string;
};

export class ConfigError extends Error {}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^[0-9]+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  }
  return Number(raw);
}

function url(name: string, value: string, protocols: string[]): string {
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new ConfigError(`${name} must be a URL, got ${JSON.stringify(value)}`);
  }
  if (!protocols.includes(parsed.protocol)) throw new ConfigError(`${name} must use ${protocols.join(' or ')}, got ${parsed.protocol}`);
  return value.replace(/\/+$/, '');
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = integer(env, 'PORT', 8080, 0, 65535);
  const databaseUrl = env.LEDGER_DATABASE_URL || 'sqlite:./data/ledger.db';
  if (!/^(sqlite:.+|postgres(ql)?:\/\/.+)$/.test(databaseUrl)) {
    throw new ConfigError('LEDGER_DATABASE_URL must be sqlite:<path> or postgres://user@host:port/db');
  }
  const readDatabaseUrl = loadReadDatabaseUrl(env, databaseUrl);
  const adminToken = env.LEDGER_ADMIN_TOKEN || null;
  if (adminToken !== null && adminToken.trim().length < 16) throw new ConfigError('LEDGER_ADMIN_TOKEN must be at least 16 characters, not counting white space');
  const logLevel = env.LEDGER_LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError(`LEDGER_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  const baseUrl = url('LEDGER_BASE_URL', env.LEDGER_BASE_URL || `http://localhost:${port}/v1`, ['http:', 'https:']);
  const siteUrl = url('LEDGER_SITE_URL', env.LEDGER_SITE_URL || `http://localhost:${port}`, ['http:', 'https:']);
  const logOrigin = env.LEDGER_LOG_ORIGIN || `${new URL(siteUrl).host}/log`;
  if (!/^[\x21-\x2a\x2c-\x7e]+$/.test(logOrigin)) throw new ConfigError(`LEDGER_LOG_ORIGIN must be printable ASCII without spaces or +, got ${JSON.stringify(logOrigin)}`);
  return {
    port,
    host: env.HOST || '127.0.0.1',
    databaseUrl,
    readDatabaseUrl,
    adminToken,
    baseUrl,
    siteUrl,
    redisUrl: env.LEDGER_REDIS_URL ? url('LEDGER_REDIS_URL', env.LEDGER_REDIS_URL, ['redis:', 'rediss:']) : null,
    writeLimitPerMinute: integer(env, 'LEDGER_WRITE_LIMIT_PER_MIN', 120, 1, 1_000_000_000),
    readLimitPerMinute: integer(env, 'LEDGER_READ_LIMIT_PER_MIN', 600, 1, 1_000_000_000),
    readBounds: loadReadBounds(env),
    logLevel,
    logKeyFile: env.LEDGER_LOG_KEY_FILE || null,
    logOrigin,
    witnessPolicyFile: env.LEDGER_WITNESS_POLICY || null,
    brokers: loadBrokerConfig(env, databaseUrl),
    anchor: loadAnchorConfig(env),
    metrics: loadMetricsConfig(env, port),
    market: marketEnv(env),
    performance: { benchmark: benchmarkOf(env) },
    webhooks: loadWebhookConfig(env),
  };
}

function loadReadBounds(env: NodeJS.ProcessEnv): ReadBounds {
  const concurrency = integer(env, 'LEDGER_READ_CONCURRENCY', 8, 1, 1024);
  const perClient = integer(env, 'LEDGER_READ_CONCURRENCY_PER_CLIENT', 4, 1, 1024);
  if (perClient > concurrency) throw new ConfigError(`LEDGER_READ_CONCURRENCY_PER_CLIENT (${perClient}) must not exceed LEDGER_READ_CONCURRENCY (${concurrency})`);
  return {
    concurrency,
    perClient,
    queue: integer(env, 'LEDGER_READ_QUEUE', 32, 0, 100_000),
    waitMs: integer(env, 'LEDGER_READ_QUEUE_WAIT_MS', 3_000, 0, 60_000),
    refusalDelayMs: integer(env, 'LEDGER_READ_REFUSAL_DELAY_MS', 1_000, 0, 60_000),
    refusalsHeld: integer(env, 'LEDGER_READ_REFUSALS_HELD', 1_024, 1, 1_000_000),
    poolSize: integer(env, 'LEDGER_READ_POOL_SIZE', 4, 1, 1024),
    loopSharePercent: integer(env, 'LEDGER_READ_LOOP_SHARE', Math.round(DEFAULT_LOOP_SHARE.share * 100), 5, 100),
    cacheBytes: integer(env, 'LEDGER_READ_CACHE_MB', 0, 0, 4096) * 1024 * 1024,
    threads: integer(env, 'LEDGER_READ_THREADS', 1, 0, 64),
    threadHeapMb: integer(env, 'LEDGER_READ_THREAD_HEAP_MB', 256, 64, 16_384),
  };
}

function loadWebhookConfig(env: NodeJS.ProcessEnv): WebhookConfig {
  const allow = env.LEDGER_WEBHOOKS_ALLOW_PRIVATE || 'false';
  if (allow !== 'true' && allow !== 'false') throw new ConfigError(`LEDGER_WEBHOOKS_ALLOW_PRIVATE must be true or false, got ${JSON.stringify(allow)}`);
  return {
    allowPrivate: allow === 'true',
    timeoutMs: integer(env, 'LEDGER_WEBHOOKS_TIMEOUT_MS', 10_000, 100, 60_000),
    retryBaseMs: integer(env, 'LEDGER_WEBHOOKS_RETRY_BASE_MS', 5_000, 10, 3_600_000),
    concurrency: integer(env, 'LEDGER_WEBHOOKS_CONCURRENCY', 8, 1, 256),
  };
}

function loadMetricsConfig(env: NodeJS.ProcessEnv, servicePort: number): MetricsConfig {
  const flag = env.LEDGER_METRICS ?? '';
  if (!['', 'true', 'false'].includes(flag)) throw new ConfigError(`LEDGER_METRICS must be true or false, got ${JSON.stringify(flag)}`);
  const port = env.LEDGER_METRICS_PORT ? integer(env, 'LEDGER_METRICS_PORT', 0, 0, 65535) : null;
  if (port !== null && flag === 'false') throw new ConfigError('LEDGER_METRICS=false and LEDGER_METRICS_PORT contradict each other: unset one');
  if (port !== null && port !== 0 && port === servicePort) throw new ConfigError(`LEDGER_METRICS_PORT must differ from PORT (${servicePort}); for metrics on the service's port, set LEDGER_METRICS=true instead`);
  const host = env.LEDGER_METRICS_HOST || '127.0.0.1';
  return { enabled: flag === 'true' || port !== null, port, host };
}

const MARKET_VARIABLE = /^LEDGER_(MARKET_DATA$|ALPACA_DATA_|SYNTHETIC_)/;

function marketEnv(env: NodeJS.ProcessEnv): MarketEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => MARKET_VARIABLE.test(name)));
}

/** The benchmark of every performance report when LEDGER_BENCHMARK is unset. */
export const DEFAULT_BENCHMARK = 'SPY';

/** A stock (`SPY`, `BRK.B`) or crypto pair (`BTC/USD`) symbol, as the market-data providers take it. */
function benchmarkOf(env: NodeJS.ProcessEnv): string {
  const symbol = env.LEDGER_BENCHMARK || DEFAULT_BENCHMARK;
  if (!/^([A-Z0-9][A-Z0-9.-]{0,19}|[A-Z0-9]+\/[A-Z0-9]+)$/.test(symbol)) throw new ConfigError(`LEDGER_BENCHMARK must be a symbol such as SPY or BTC/USD, got ${JSON.stringify(symbol)}`);
  return symbol;
}

function loadReadDatabaseUrl(env: NodeJS.ProcessEnv, databaseUrl: string): string | null {
  const url = env.LEDGER_READ_DATABASE_URL || null;
  if (url === null) return null;
  if (databaseUrl.startsWith('sqlite:')) {
    throw new ConfigError('LEDGER_READ_DATABASE_URL is for a PostgreSQL read replica; a SQLite ledger has none (its readers share the file): unset it, or use PostgreSQL');
  }
  if (!/^postgres(ql)?:\/\/.+/.test(url)) throw new ConfigError('LEDGER_READ_DATABASE_URL must be postgres://user@host:port/db (a streaming replica of LEDGER_DATABASE_URL)');
  return url;
}

/** The public aggregators the OpenTimestamps reference client submits to (LEDGER_OTS_CALENDARS unset). */
export const DEFAULT_OTS_CALENDARS = [
  'https://a.pool.opentimestamps.org',
  'https://b.pool.opentimestamps.org',
  'https://a.pool.eternitywall.com',
  'https://ots.btc.catallaxy.com',
];

function loadAnchorConfig(env: NodeJS.ProcessEnv): AnchorConfig {
  const calendars = (env.LEDGER_OTS_CALENDARS || DEFAULT_OTS_CALENDARS.join(',')).split(',').map((c) => c.trim()).filter((c) => c !== '')
    .map((c) => url('LEDGER_OTS_CALENDARS', c, ['http:', 'https:']));
  if (calendars.length === 0) throw new ConfigError('LEDGER_OTS_CALENDARS must name at least one calendar URL');
  return {
    calendars,
    headersUrl: url('LEDGER_BITCOIN_HEADERS_URL', env.LEDGER_BITCOIN_HEADERS_URL || 'https://blockstream.info/api', ['http:', 'https:']),
    intervalS: integer(env, 'LEDGER_ANCHOR_INTERVAL_S', 600, 1, 86_400 * 7),
  };
}

/** A partner credential: printable ASCII without white space (it is signed and sent in query strings), never echoed. */
function credential(env: NodeJS.ProcessEnv, name: string): string | null {
  const value = env[name] || null;
  if (value !== null && !/^[\x21-\x7e]{1,256}$/.test(value)) {
    throw new ConfigError(`${name} must be at most 256 printable ASCII characters without spaces, line breaks or control characters`);
  }
  return value;
}

function loadBrokerConfig(env: NodeJS.ProcessEnv, databaseUrl: string): BrokerConfig {
  const sqlitePath = databaseUrl.startsWith('sqlite:') ? databaseUrl.slice('sqlite:'.length) : null;
  const dataDir = sqlitePath && sqlitePath !== ':memory:' && sqlitePath.includes('/') ? sqlitePath.slice(0, sqlitePath.lastIndexOf('/')) || '/' : './data';
  return {
    alpacaTradingUrl: env.LEDGER_ALPACA_TRADING_URL ? url('LEDGER_ALPACA_TRADING_URL', env.LEDGER_ALPACA_TRADING_URL, ['http:', 'https:']) : null,
    snaptradeUrl: url('LEDGER_SNAPTRADE_URL', env.LEDGER_SNAPTRADE_URL || 'https://api.snaptrade.com', ['http:', 'https:']),
    snaptradeClientId: credential(env, 'LEDGER_SNAPTRADE_CLIENT_ID'),
    snaptradeConsumerKey: credential(env, 'LEDGER_SNAPTRADE_CONSUMER_KEY'),
    syncIntervalS: integer(env, 'LEDGER_SYNC_INTERVAL_S', 60, 0, 86_400 * 7),
    masterKey: env.LEDGER_MASTER_KEY || null,
    masterKeyFile: env.LEDGER_MASTER_KEY_FILE || null,
    dataDir,
  };
}
