// OpenTimestamps calendar client (reference/tamper-evidence a.11, a.13). It is responsible for
// submitting a digest to calendars (`POST /digest`), asking them for upgrades (`GET
// /timestamp/<hex>`), stamping a digest on several calendars and merging their answers, and
// upgrading a file's pending attestations from the calendars the caller allows. Failures are values
// naming the calendar and what went wrong.

import { randomBytes } from 'node:crypto';
import { boundedFetch, trimBase, type HttpFailure, type HttpOptions } from '../runtime/bounded-http.ts';
import {
  buildDetachedFile,
  mergeAt,
  parseTimestamp,
  pendingCalendars,
  submittedMessage,
  toHex,
  type DetachedTimestampFile,
  type OtsError,
  type Result,
  type Timestamp,
} from '../method/ots/codec.ts';

export const ACCEPT = 'application/vnd.opentimestamps.v1';
/** A calendar refuses digests longer than this. */
export const MAX_DIGEST_LENGTH = 64;
/** The reference client's upgrade whitelist: pending attestations naming other URLs are not followed. */
export const DEFAULT_CALENDAR_WHITELIST = ['https://*.calendar.opentimestamps.org', 'https://*.calendar.eternitywall.com', 'https://*.calendar.catallaxy.com'];

export type CalendarError =
  | { kind: HttpFailure['kind']; calendar: string; message: string }
  | { kind: 'http_status'; calendar: string; status: number; message: string }
  | { kind: 'malformed'; calendar: string; message: string; ots?: OtsError };

export type CalendarOptions = HttpOptions;

/** `POST <calendar>/digest`: the calendar's timestamp for `message`, ending in its PendingAttestation. */
export async function submitDigest(calendar: string, message: Uint8Array, options: CalendarOptions = {}): Promise<Result<Timestamp, CalendarError>> {
  if (message.length < 1 || message.length > MAX_DIGEST_LENGTH) {
    return { ok: false, error: { kind: 'malformed', calendar, message: `a submitted digest is 1 to ${MAX_DIGEST_LENGTH} bytes, not ${message.length}` } };
  }
  const answer = await boundedFetch(
    `${trimBase(calendar)}/digest`,
    { method: 'POST', headers: { Accept: ACCEPT, 'Content-Type': 'application/octet-stream' }, body: message },
    options,
  );
  if (!answer.ok) return { ok: false, error: { ...answer.error, calendar } };
  const { status, body } = answer.value;
  if (status !== 200) return { ok: false, error: { kind: 'http_status', calendar, status, message: sanitised(body) } };
  return readTimestamp(calendar, body, message.length);
}

export type UpgradeAnswer =
  | { state: 'upgraded'; timestamp: Timestamp }
  /** 404 "Pending confirmation in Bitcoin blockchain": ask again later */
  | { state: 'pending' }
  /** 404 for any other reason: the calendar does not know the commitment */
  | { state: 'not_found'; message: string };

/** `GET <calendar>/timestamp/<hex commitment>`: what the calendar has gained for this commitment. */
export async function fetchUpgrade(calendar: string, commitment: Uint8Array, options: CalendarOptions = {}): Promise<Result<UpgradeAnswer, CalendarError>> {
  const answer = await boundedFetch(`${trimBase(calendar)}/timestamp/${toHex(commitment)}`, { method: 'GET', headers: { Accept: ACCEPT } }, options);
  if (!answer.ok) return { ok: false, error: { ...answer.error, calendar } };
  const { status, body } = answer.value;
  if (status === 404) {
    const text = sanitised(body);
    return { ok: true, value: /pending/i.test(text) ? { state: 'pending' } : { state: 'not_found', message: text } };
  }
  if (status !== 200) return { ok: false, error: { kind: 'http_status', calendar, status, message: sanitised(body) } };
  const timestamp = readTimestamp(calendar, body, commitment.length);
  return timestamp.ok ? { ok: true, value: { state: 'upgraded', timestamp: timestamp.value } } : timestamp;
}

function readTimestamp(calendar: string, body: Uint8Array, messageLength: number): Result<Timestamp, CalendarError> {
  const parsed = parseTimestamp(body, messageLength);
  if (!parsed.ok) return { ok: false, error: { kind: 'malformed', calendar, message: `not a timestamp: ${parsed.error.message}`, ots: parsed.error } };
  return parsed;
}

export type StampOptions = CalendarOptions & {
  /** how many calendars must answer; default 2 when two or more are given, else 1 (as the JS library) */
  minAnswers?: number;
  /** 16 random bytes unless given (tests pass their own) */
  nonce?: Uint8Array;
};

export type Stamp = { file: DetachedTimestampFile; answered: string[]; failures: CalendarError[] };
export type StampFailure = { kind: 'not_enough_answers'; needed: number; answered: string[]; failures: CalendarError[] } | { kind: 'bad_digest'; message: string };

/**
 * Timestamps a SHA-256 digest on several calendars at once: submits SHA-256(digest ‖ nonce) to each
 * and merges the answers into one `.ots` file with a branch per calendar that answered.
 */
export async function stampDigest(digest: Uint8Array, calendars: string[], options: StampOptions = {}): Promise<Result<Stamp, StampFailure>> {
  if (digest.length !== 32) return { ok: false, error: { kind: 'bad_digest', message: `a SHA-256 digest is 32 bytes, not ${digest.length}` } };
  const nonce = options.nonce ?? new Uint8Array(randomBytes(16));
  const needed = options.minAnswers ?? Math.min(2, calendars.length);
  const message = submittedMessage(digest, nonce);
  const results = await Promise.all(calendars.map((c) => submitDigest(c, message, options)));
  const answers: Timestamp[] = [];
  const answered: string[] = [];
  const failures: CalendarError[] = [];
  results.forEach((r, i) => {
    if (r.ok) {
      answers.push(r.value);
      answered.push(calendars[i]!);
    } else failures.push(r.error);
  });
  if (answers.length < Math.max(1, needed)) return { ok: false, error: { kind: 'not_enough_answers', needed: Math.max(1, needed), answered, failures } };
  const file = buildDetachedFile(digest, nonce, answers);
  if (!file.ok) return { ok: false, error: { kind: 'bad_digest', message: file.error.message } };
  return { ok: true, value: { file: file.value, answered, failures } };
}

export type UpgradeOptions = CalendarOptions & {
  /** URL patterns (`*` matches within the host) of calendars whose pending attestations are followed */
  allowedCalendars?: string[];
};

export type Upgrade = {
  file: DetachedTimestampFile;
  /** calendars whose answers were merged in */
  upgraded: string[];
  stillPending: string[];
  notFound: string[];
  /** pending attestations naming calendars outside the allowed list */
  skipped: string[];
  failures: CalendarError[];
};

/**
 * Asks each allowed calendar the file is pending on for its upgrade and merges what comes back at
 * the commitment it was asked about. The input file is not changed.
 */
export async function upgradeFile(file: DetachedTimestampFile, options: UpgradeOptions = {}): Promise<Upgrade> {
  const allowed = options.allowedCalendars ?? DEFAULT_CALENDAR_WHITELIST;
  const out: Upgrade = { file, upgraded: [], stillPending: [], notFound: [], skipped: [], failures: [] };
  let timestamp = file.timestamp;
  for (const { uri, commitment } of pendingCalendars(file.timestamp, file.digest)) {
    if (!calendarAllowed(uri, allowed)) {
      out.skipped.push(uri);
      continue;
    }
    const answer = await fetchUpgrade(uri, commitment, options);
    if (!answer.ok) out.failures.push(answer.error);
    else if (answer.value.state === 'pending') out.stillPending.push(uri);
    else if (answer.value.state === 'not_found') out.notFound.push(uri);
    else {
      timestamp = mergeAt(timestamp, file.digest, commitment, answer.value.timestamp).timestamp;
      out.upgraded.push(uri);
    }
  }
  out.file = { ...file, timestamp };
  return out;
}

/** Same scheme, same path, host matching the pattern's host (`*` for any run of characters); no query. */
export function calendarAllowed(uri: string, patterns: string[]): boolean {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return false;
  }
  if (url.search || url.hash || url.username || url.password) return false;
  return patterns.some((p) => {
    const m = /^(https?:)\/\/([^/]+)(\/.*)?$/.exec(p);
    if (!m) return false;
    const host = new RegExp('^' + m[2]!.split('*').map(escapeRegExp).join('.*') + '$', 'i');
    return url.protocol === m[1] && host.test(url.host) && trimBase(url.pathname) === trimBase(m[3] ?? '');
  });
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A calendar's error text, cut to 160 printable characters as the reference client does. */
function sanitised(body: Uint8Array): string {
  return Array.from(body.subarray(0, 160), (b) => (/[A-Za-z0-9#\-.,; ]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : '_')).join('');
}
