// The verifier's checks of the global log (log_v1 §6 steps 2-4), with the core alone:
//  - a whole log, read as C2SP tlog-tiles from a URL prefix (`<base_url>/log`) or a directory
//    holding the same paths: every entry bundle hashes to the level-0 tiles, every higher tile
//    to the tiles below, the whole to the checkpoint's root; the checkpoint's signature under the
//    vkey; every agent's entries in chain order; and each pinned checkpoint a prefix of it;
//  - a proof bundle's inclusion_proof, in proof.ts (pure, shared with the client), re-exported here.
// Every failure names the log index, tile path, record or checkpoint at fault.
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { canonicalJson, type CanonValue } from '../core/canon.ts';
import { verifyRaw } from '../core/ed25519.ts';
import { hashesEqual, leafHash, MemoryTree, treeHead, type Hash } from '../core/merkle.ts';
import { openCheckpoint, parseCheckpointBody, parseNote, parseVkey, type Checkpoint, type Vkey } from '../core/note.ts';
import { sha256Hex } from '../core/sha256.ts';
import { parseEntryBundle, parseTile, tileLevels, tilePath, TILE_WIDTH, type Tile } from '../core/tiles.ts';
import type { Failure } from './records.ts';
import { UnusableInput } from './documents.ts';
import { checkpointCheck, witnessCheck, type LogCheck, type PinnedCheckpoint } from './proof.ts';
import { parseWitnessPolicy, policyOfWitnesses, type WitnessPolicy } from '../core/witness-policy.ts';

export { checkpointCheck, publishedVkey, verifyBundleInclusion, type LogCheck, type PinnedCheckpoint } from './proof.ts';

const MAX_FAILURES = 100;
const decoder = new TextDecoder('utf-8', { fatal: true });

// ---------------------------------------------------------------------------------------------
// Keys and pinned checkpoints

/** A vkey given as its text or as a file holding it. */
export async function readVkey(given: string): Promise<Vkey> {
  let text = given.trim();
  if (!parseVkey(text).ok) {
    try {
      text = (await readFile(given, 'utf8')).trim();
    } catch {
      throw new UnusableInput(`--vkey is neither a vkey (<name>+<hex id>+<base64 key>) nor a readable file: ${given}`);
    }
  }
  const vkey = parseVkey(text);
  if (!vkey.ok) throw new UnusableInput(`--vkey: ${vkey.error}`);
  return vkey.value;
}

/**
 * The witness policy to require: a tlog-policy file (`--witness-policy`), or witness vkeys
 * (`--witness`, repeatable) of which `--quorum` (default: all) must cosign; null when none is given.
 */
export async function readWitnessPolicy(given: { file?: string; witnesses?: string[]; quorum?: number }): Promise<WitnessPolicy | null> {
  const vkeys = given.witnesses ?? [];
  if (given.file !== undefined) {
    if (vkeys.length > 0 || given.quorum !== undefined) throw new UnusableInput('--witness-policy and --witness/--quorum are exclusive: put the witnesses and the quorum in the policy file');
    let text: string;
    try {
      text = await readFile(given.file, 'utf8');
    } catch (e) {
      throw new UnusableInput(`--witness-policy ${given.file}: not readable (${(e as Error).message})`);
    }
    const policy = parseWitnessPolicy(text);
    if (!policy.ok) throw new UnusableInput(`--witness-policy ${given.file}: ${policy.error}`);
    return policy.value;
  }
  if (vkeys.length === 0) {
    if (given.quorum !== undefined) throw new UnusableInput('--quorum needs the witnesses it counts: give each with --witness <vkey> (or use --witness-policy)');
    return null;
  }
  const policy = policyOfWitnesses(vkeys, given.quorum ?? vkeys.length);
  if (!policy.ok) throw new UnusableInput(`--witness/--quorum: ${policy.error}`);
  return policy.value;
}

export async function readPinnedCheckpoint(path: string): Promise<PinnedCheckpoint> {
  let note: string;
  try {
    note = await readFile(path, 'utf8');
  } catch (e) {
    throw new UnusableInput(`--pin ${path}: not <seq>:<chain_hash> and not a readable checkpoint file (${(e as Error).message})`);
  }
  const parsed = parseNote(note);
  if (!parsed.ok) throw new UnusableInput(`--pin ${path}: not a signed checkpoint: ${parsed.error}`);
  const body = parseCheckpointBody(parsed.value.text);
  if (!body.ok) throw new UnusableInput(`--pin ${path}: not a log_v1 checkpoint: ${body.error}`);
  return { path, note, checkpoint: body.value };
}

// ---------------------------------------------------------------------------------------------
// A whole log, from tiles

/** Reads paths below the log prefix: null when absent. */
export type TileSource = { origin: string; read: (path: string) => Promise<Uint8Array | null> };

export async function isLogDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory() && (await stat(join(path, 'checkpoint'))).isFile();
  } catch {
    return false;
  }
}

export function isLogUrl(source: string): boolean {
  return /^https?:\/\/.+\/log\/?$/i.test(source);
}

export function tileSource(source: string, fetcher: typeof fetch): TileSource {
  if (isLogUrl(source)) {
    const prefix = source.replace(/\/+$/, '');
    return {
      origin: prefix,
      read: async (path) => {
        let res: Response;
        try {
          res = await fetcher(`${prefix}/${path}`);
        } catch (e) {
          throw new UnusableInput(`cannot fetch ${prefix}/${path}: ${(e as Error).message}`);
        }
        if (res.status === 404) return null;
        if (res.status !== 200) throw new UnusableInput(`${prefix}/${path} answered ${res.status}`);
        return new Uint8Array(await res.arrayBuffer());
      },
    };
  }
  return {
    origin: source,
    read: async (path) => {
      try {
        return new Uint8Array(await readFile(join(source, ...path.split('/'))));
      } catch {
        return null;
      }
    },
  };
}

class Failures {
  list: Failure[] = [];
  count = 0;
  add(f: Failure): void {
    this.count++;
    if (this.list.length < MAX_FAILURES) this.list.push(f);
  }
}

/** Every level's hashes computed from the leaf hashes, as tiles hold them (level l: hashes at tree level 8l). */
function expectedLevels(leaves: Hash[]): Hash[][] {
  const levels = [leaves];
  for (let below = leaves; below.length >= TILE_WIDTH;) {
    const up: Hash[] = [];
    for (let i = 0; i + TILE_WIDTH <= below.length; i += TILE_WIDTH) up.push(treeHead(below.slice(i, i + TILE_WIDTH)));
    levels.push(up);
    below = up;
  }
  return levels;
}

function pathOf(tile: Tile): string {
  const p = tilePath(tile);
  return p.ok ? p.value : `${tile.level}/${tile.index}`;
}

/** The tiles of a tree of `size` leaves at `level` ('entries' or a hash level). */
function tilesAt(size: number, level: number | 'entries'): Tile[] {
  const hashLevel = level === 'entries' ? 0 : level;
  const info = tileLevels(size)[hashLevel];
  if (!info) return [];
  const tiles: Tile[] = [];
  for (let i = 0; i < info.fullTiles; i++) tiles.push({ level, index: i, width: TILE_WIDTH });
  if (info.partialWidth > 0) tiles.push({ level, index: info.fullTiles, width: info.partialWidth });
  return tiles;
}

type ChainState = { seq: number; hash: string };

/** An agent's entries must follow its chain: seq one more each time, prev_hash the previous entry's hash. */
function checkChainOrder(data: Uint8Array, index: number, chains: Map<string, ChainState>, failures: Failures): void {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(decoder.decode(data)) as Record<string, unknown>;
  } catch {
    failures.add({ name: 'chain_order', where: `log index ${index}`, detail: 'the entry is not UTF-8 JSON' });
    return;
  }
  const agent = String(entry.agent);
  const seq = Number(entry.seq);
  const before = chains.get(agent) ?? { seq: 0, hash: '0'.repeat(64) };
  const where = `log index ${index} (agent ${agent}, seq ${String(entry.seq)}${typeof entry.id === 'string' ? `, ${entry.id}` : ''})`;
  if (canonicalJson(entry as CanonValue) !== decoder.decode(data)) failures.add({ name: 'chain_order', where, detail: 'the entry is not in canon_v1 form' });
  else if (seq !== before.seq + 1) failures.add({ name: 'chain_order', where, detail: `the agent's previous entry in the log is seq ${before.seq}: the log does not keep chain order` });
  else if (entry.prev_hash !== before.hash) failures.add({ name: 'chain_order', where, detail: `prev_hash is not the chain_hash of the agent's previous entry in the log (${before.hash})` });
  chains.set(agent, { seq, hash: sha256Hex(data) });
}

export type LogWalk = { checks: LogCheck[]; entries: number; origin: string };

export async function verifyLog(
  source: TileSource,
  options: { vkey: Vkey | null; vkeyFrom: string; pins: PinnedCheckpoint[]; witnessPolicy?: WitnessPolicy | null },
): Promise<LogWalk> {
  const noteBytes = await source.read('checkpoint');
  if (!noteBytes) throw new UnusableInput(`${source.origin}: no checkpoint`);
  const note = decoder.decode(noteBytes);
  // Not a note at all (an HTML page, a JSON document): nothing of a log was served.
  const asNote = parseNote(note);
  if (!asNote.ok) throw new UnusableInput(`${source.origin}/checkpoint is not a signed note: ${asNote.error}`);
  const { check: signature, checkpoint } = checkpointCheck(note, options.vkey, options.vkeyFrom, 'the checkpoint');
  const checks: LogCheck[] = [signature];
  if (options.witnessPolicy) checks.push(witnessCheck(note, options.witnessPolicy, 'the checkpoint'));
  if (!checkpoint) return { checks, entries: 0, origin: source.origin };
  const size = checkpoint.size;

  // Entry bundles -> leaf hashes, and each agent's chain order along the log.
  const bundleFailures = new Failures();
  const orderFailures = new Failures();
  const chains = new Map<string, ChainState>();
  const leaves: Hash[] = [];
  for (const tile of tilesAt(size, 'entries')) {
    const path = pathOf(tile);
    const bytes = await source.read(path);
    const first = tile.index * TILE_WIDTH;
    const parsed = bytes ? parseEntryBundle(bytes, tile.width) : null;
    if (!parsed || !parsed.ok) {
      bundleFailures.add({ name: 'entry_bundles', where: `${path} (log indexes ${first}-${first + tile.width - 1})`, detail: bytes ? (parsed as { error: string }).error : 'missing' });
      for (let i = 0; i < tile.width; i++) leaves.push(new Uint8Array(32));
      continue;
    }
    parsed.value.forEach((data, i) => {
      leaves.push(leafHash(data));
      checkChainOrder(data, first + i, chains, orderFailures);
    });
  }
  checks.push({ name: 'entry_bundles', ok: bundleFailures.count === 0, summary: `${leaves.length} entries read from ${tilesAt(size, 'entries').length} bundle(s)`, failures: bundleFailures.list });
  checks.push({ name: 'chain_order', ok: orderFailures.count === 0, summary: `${chains.size} agent chain(s) follow each other in the log in chain order`, failures: orderFailures.list });

  // Hash tiles: level 0 holds the leaf hashes; each higher hash is the head of a full tile below.
  const levels = expectedLevels(leaves);
  const tileFailures = new Failures();
  let tileCount = 0;
  for (let level = 0; level < levels.length; level++) {
    for (const tile of tilesAt(size, level)) {
      tileCount++;
      const path = pathOf(tile);
      const bytes = await source.read(path);
      const parsed = bytes ? parseTile(bytes, tile.width) : null;
      if (!parsed || !parsed.ok) {
        tileFailures.add({ name: 'tiles', where: path, detail: bytes ? (parsed as { error: string }).error : 'missing' });
        continue;
      }
      parsed.value.forEach((h, i) => {
        const n = tile.index * TILE_WIDTH + i;
        if (!hashesEqual(h, levels[level]![n]!)) {
          tileFailures.add({ name: 'tiles', where: `${path} hash ${i}`, detail: level === 0 ? `is not the leaf hash of log index ${n}'s entry` : `is not the head of tile ${level - 1}/${n} computed from the entries` });
        }
      });
    }
  }
  checks.push({ name: 'tiles', ok: tileFailures.count === 0, summary: `${tileCount} hash tile(s) match the entries`, failures: tileFailures.list });

  const tree = new MemoryTree();
  tree.append(leaves);
  const root = tree.root();
  const rootOk = root.ok && hashesEqual(root.value, checkpoint.root) && bundleFailures.count === 0;
  checks.push({ name: 'root', ok: rootOk, summary: rootOk ? `the ${size} entries give the checkpoint's root` : `the entries do not give the checkpoint's root (size ${size})`, failures: [] });

  checks.push(...options.pins.map((pin) => pinnedAgainstTree(pin, checkpoint, tree, options.vkey)));
  return { checks, entries: leaves.length, origin: source.origin };
}

function pinnedAgainstTree(pin: PinnedCheckpoint, latest: Checkpoint, tree: MemoryTree, vkey: Vkey | null): LogCheck {
  const p = pin.checkpoint;
  const failures: Failure[] = [];
  if (vkey && !openCheckpoint(pin.note, vkey, verifyRaw).ok) failures.push({ name: 'pinned_checkpoint', where: pin.path, detail: 'its signature does not verify under the log key' });
  if (p.origin !== latest.origin) failures.push({ name: 'pinned_checkpoint', where: pin.path, detail: `origin ${p.origin} is not the log's ${latest.origin}` });
  if (p.size > latest.size) {
    failures.push({ name: 'pinned_checkpoint', where: pin.path, detail: `size ${p.size} is larger than the log's ${latest.size}: the log shrank` });
  } else if (p.size > 0) {
    const root = tree.root(p.size);
    if (!root.ok || !hashesEqual(root.value, p.root)) failures.push({ name: 'pinned_checkpoint', where: pin.path, detail: `the log's first ${p.size} entries do not give the pinned root: history was rewritten` });
  }
  return { name: 'pinned_checkpoint', ok: failures.length === 0, summary: `checkpoint pinned in ${pin.path} (size ${p.size}) is a prefix of the log (size ${latest.size})`, failures };
}

