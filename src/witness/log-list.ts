// The witness's log list, in the witness network's `logs/v0` format (transparency-dev/witness-network
// docs/log-list-format.md): a `logs/v0` line, then per log `vkey <vkey>` (Ed25519 note key, 0x01)
// and optionally `origin <origin|none>`, `bastion`, `qpd <n>`, `contact <text>`, each at most once
// (the format names an order, its own example breaks it: any order is taken). Blank lines and `#`
// comments are ignored. This file parses it strictly into origin -> trusted keys.
import { parseDecimalCount, parseVkey, type Vkey } from '../core/note.ts';

export type WitnessedLog = { origin: string; vkeys: Vkey[]; qpd: number | null; contact: string | null };

/** Logs by origin; one origin may be listed with several keys (key rotation). */
export type LogList = Map<string, WitnessedLog>;

export type ListResult = { ok: true; value: LogList } | { ok: false; error: string };

const MAX_LOGS = 100_000;
const WORDS = ['vkey', 'origin', 'bastion', 'qpd', 'contact'];

export function parseLogList(text: string): ListResult {
  const list: LogList = new Map();
  let header = false;
  let current: { vkey: Vkey; origin: string; qpd: number | null; contact: string | null; seen: Set<string> } | null = null;
  const flush = () => {
    if (!current) return;
    const log = list.get(current.origin) ?? { origin: current.origin, vkeys: [], qpd: current.qpd, contact: current.contact };
    log.vkeys.push(current.vkey);
    list.set(current.origin, log);
  };
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.replace(/\r$/, '').trim();
    const where = `line ${i + 1}`;
    if (line === '' || line.startsWith('#')) continue;
    if (!header) {
      if (line !== 'logs/v0') return { ok: false, error: `${where}: the list must start with logs/v0` };
      header = true;
      continue;
    }
    const space = line.indexOf(' ');
    const [word, arg] = space < 0 ? [line, ''] : [line.slice(0, space), line.slice(space + 1).trim()];
    const rank = WORDS.indexOf(word);
    if (rank < 0) return { ok: false, error: `${where}: unknown line ${JSON.stringify(word)}` };
    if (rank === 0) {
      flush();
      const vkey = parseVkey(arg);
      if (!vkey.ok) return { ok: false, error: `${where}: vkey: ${vkey.error}` };
      current = { vkey: vkey.value, origin: vkey.value.name, qpd: null, contact: null, seen: new Set() };
      if (list.size >= MAX_LOGS) return { ok: false, error: `more than ${MAX_LOGS} logs` };
      continue;
    }
    if (!current) return { ok: false, error: `${where}: ${word} before any vkey` };
    if (current.seen.has(word)) return { ok: false, error: `${where}: a second ${word} line for one log` };
    current.seen.add(word);
    if (word === 'origin' && arg !== 'none') {
      // Origins are the checkpoint's first line: any non-empty text without control characters.
      if (arg === '' || /[\x00-\x1f]/.test(arg)) return { ok: false, error: `${where}: invalid origin` };
      current.origin = arg;
    } else if (word === 'qpd') {
      const n = parseDecimalCount(arg);
      if (n === null || n < 1 || n > 2 ** 31 - 1) return { ok: false, error: `${where}: qpd must be 1 .. 2^31-1` };
      current.qpd = n;
    } else if (word === 'contact') {
      current.contact = arg;
    }
  }
  if (!header) return { ok: false, error: 'the list must start with logs/v0' };
  flush();
  return { ok: true, value: list };
}
