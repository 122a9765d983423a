// Reading the global log (log_v1 §3-4): the latest checkpoint, hash tiles and entry bundles in
// C2SP tlog-tiles form, inclusion and consistency proofs as JSON, the per-record
// `inclusion_proof` of /proof, and the log's part of /transparency. Everything is read from what
// the integrator stored; nothing here hashes more than a proof's few tiles.
import { b64Encode } from '../core/base64.ts';
import { consistencyPlan, inclusionPlan, planNodes, readProof, type Hash } from '../core/merkle.ts';
import { encodeEntryBundle, encodeTile, parseTilePath, TILE_WIDTH } from '../core/tiles.ts';
import { encodeTlogProof } from '../core/tlog-proof.ts';
import { errors, fail, ok, type Result } from '../domain/errors.ts';
import type { LogReader, StoredCheckpoint } from './port.ts';
import { BATCH_WINDOW_MS, leafData } from './integrator.ts';
import { TileReader, tileKey } from './tree.ts';
import { WitnessReads, type Witnessing, type WitnessedView } from './witness-reads.ts';

export type LogTile = { bytes: Uint8Array; full: boolean; kind: 'hashes' | 'entries' };

/** log_v1 §4: the record's inclusion proof in the latest checkpoint. */
export type InclusionProofView = {
  log_index: number;
  tree_size: number;
  hashes: string[];
  checkpoint: string;
  tlog_proof: string;
  /** Only with a witness policy: whether the checkpoint satisfies its quorum. */
  witnessed?: WitnessedView;
};

/** What /proof says while a record waits for the integrator. */
export type InclusionPending = { status: 'pending'; retry_after_seconds: number; message: string };

/** Seconds after which a record not yet in a checkpoint is worth asking for again. */
export const LOOK_AGAIN_SECONDS = Math.max(1, Math.ceil((BATCH_WINDOW_MS * 4) / 1000));

export class LogReads {
  private readonly tileReader: TileReader;
  private readonly witnesses: WitnessReads | null;

  constructor(private readonly log: LogReader, private readonly vkey: string | null, private readonly baseUrl: string, witnessing: Witnessing | null = null) {
    this.tileReader = new TileReader(log);
    this.witnesses = witnessing ? new WitnessReads(witnessing) : null;
  }

  /**
   * A checkpoint as published: with a witness policy, its note carries every cosignature received
   * and `witnessed` says whether they satisfy the quorum; without one, as stored.
   */
  private async published(checkpoint: StoredCheckpoint): Promise<{ checkpoint: StoredCheckpoint; witnessed?: WitnessedView }> {
    return this.witnesses ? this.witnesses.cosigned(checkpoint) : { checkpoint };
  }

  /** The latest signed checkpoint; null while the log is empty (an empty log publishes none). */
  async checkpoint(): Promise<StoredCheckpoint | null> {
    const latest = await this.log.latestCheckpoint();
    return latest ? (await this.published(latest)).checkpoint : null;
  }

  /** `tile/<L>/<N>[.p/<W>]` or `tile/entries/<N>[.p/<W>]` below the log prefix. */
  async tile(path: string): Promise<Result<LogTile>> {
    const parsed = parseTilePath(path);
    if (!parsed.ok) return fail(errors.notFound(`no tile ${path}: ${parsed.error}`, 'path'));
    const { level, index, width } = parsed.value;
    const full = width === TILE_WIDTH;
    if (level === 'entries') {
      const records = await this.log.entries(index * TILE_WIDTH, width);
      if (records.length < width) return fail(errors.notFound(`no entry bundle ${path}: the log has not grown that far`, 'path'));
      const bundle = encodeEntryBundle(records.map(leafData));
      if (!bundle.ok) return fail(errors.internalError(bundle.error));
      return ok({ bytes: bundle.value, full, kind: 'entries' });
    }
    const stored = (await this.tileReader.tiles([{ level, index, width }])).get(tileKey({ level, index }));
    if (!stored || stored.length < width) return fail(errors.notFound(`no tile ${path}: the log has not grown that far`, 'path'));
    const bytes = encodeTile(stored.slice(0, width));
    if (!bytes.ok) return fail(errors.internalError(bytes.error));
    return ok({ bytes: bytes.value, full, kind: 'hashes' });
  }

  private async latestSize(): Promise<number> {
    return (await this.log.latestCheckpoint())?.treeSize ?? 0;
  }

  /** The proof's hashes, and with `leaf` that leaf's hash, read from the tile that holds it. */
  private async proofHashes(plan: ReturnType<typeof inclusionPlan>, leaf?: number): Promise<Result<{ hashes: Hash[]; leaf?: Hash }>> {
    if (!plan.ok) return fail(errors.internalError(plan.error));
    const leafNode = leaf === undefined ? [] : [{ level: 0, index: leaf }];
    const reader = await this.tileReader.readerFor([...planNodes(plan.value), ...leafNode]);
    const proof = readProof(plan.value, reader);
    if (!proof.ok) return fail(errors.internalError(proof.error));
    if (leaf === undefined) return ok({ hashes: proof.value });
    const leafHash = reader({ level: 0, index: leaf });
    return leafHash ? ok({ hashes: proof.value, leaf: leafHash }) : fail(errors.internalError(`leaf ${leaf}'s hash is not stored`));
  }

  /** GET /log/proof/inclusion: the record's inclusion proof at `treeSize` (default: the latest checkpoint). */
  async inclusion(recordId: string, treeSize?: number) {
    const [leaf, latest] = await Promise.all([this.log.leafOf(recordId), this.log.latestCheckpoint()]);
    if (!leaf) {
      return fail(errors.notFound(`record ${recordId} is not in the log (unknown, or not integrated yet: look again in ${LOOK_AGAIN_SECONDS} s)`, 'record_id'));
    }
    const latestSize = latest?.treeSize ?? 0;
    const size = treeSize ?? latestSize;
    if (size > latestSize) return fail(errors.invalidRequest(`tree_size ${size} is larger than the latest checkpoint's (${latestSize})`, 'tree_size'));
    if (size <= leaf.logIndex) return fail(errors.invalidRequest(`the record is at log index ${leaf.logIndex}, not in a tree of size ${size}`, 'tree_size'));
    const proof = await this.proofHashes(inclusionPlan(leaf.logIndex, size), leaf.logIndex);
    if (!proof.ok) return proof;
    const stored = size === latestSize ? latest : await this.log.checkpointAt(size);
    const checkpoint = stored ? await this.published(stored) : null;
    return ok({
      record_id: recordId,
      log_index: leaf.logIndex,
      tree_size: size,
      leaf_hash: b64Encode(proof.value.leaf!),
      hashes: proof.value.hashes.map(b64Encode),
      checkpoint: checkpoint?.checkpoint.note ?? null,
      ...(this.witnesses ? { witnessed: checkpoint?.witnessed ?? null } : {}),
    });
  }

  /** GET /log/proof/consistency: the proof that the tree of `from` leaves is a prefix of the tree of `to`. */
  async consistency(from: number, to: number) {
    const latest = await this.latestSize();
    if (from < 1) return fail(errors.invalidRequest('from must be at least 1 (no proof from the empty tree)', 'from'));
    if (to > latest) return fail(errors.invalidRequest(`to ${to} is larger than the latest checkpoint's tree size (${latest})`, 'to'));
    if (from > to) return fail(errors.invalidRequest(`from ${from} is larger than to ${to}`, 'from'));
    const proof = await this.proofHashes(consistencyPlan(from, to));
    if (!proof.ok) return proof;
    return ok({ from, to, hashes: proof.value.hashes.map(b64Encode) });
  }

  /** The `inclusion_proof` of /proof (log_v1 §4), or why it is null and when to look again. */
  async proofSection(recordId: string): Promise<{ inclusion_proof: InclusionProofView | null; inclusion_pending: InclusionPending | null }> {
    const [leaf, latest] = await Promise.all([this.log.leafOf(recordId), this.log.latestCheckpoint()]);
    if (!leaf || !latest || latest.treeSize <= leaf.logIndex) {
      return {
        inclusion_proof: null,
        inclusion_pending: {
          status: 'pending',
          retry_after_seconds: LOOK_AGAIN_SECONDS,
          message: `The global log has not integrated this record yet; it is integrated within about a second of being recorded. Look again in ${LOOK_AGAIN_SECONDS} s.`,
        },
      };
    }
    const proof = await this.proofHashes(inclusionPlan(leaf.logIndex, latest.treeSize));
    if (!proof.ok) throw new Error(proof.error.message);
    const hashes = proof.value.hashes;
    const { checkpoint, witnessed } = await this.published(latest);
    const tlog = encodeTlogProof({ index: leaf.logIndex, hashes, checkpoint: checkpoint.note });
    if (!tlog.ok) throw new Error(tlog.error);
    return {
      inclusion_proof: {
        log_index: leaf.logIndex,
        tree_size: latest.treeSize,
        hashes: hashes.map(b64Encode),
        checkpoint: checkpoint.note,
        tlog_proof: tlog.value,
        ...(witnessed ? { witnessed } : {}),
      },
      inclusion_pending: null,
    };
  }

  /** The log's part of /transparency: its key, its latest checkpoint, and where to read it. */
  async transparency() {
    const witnesses = await this.witnesses?.transparency(); // their states first (witness-reads.ts)
    const stored = await this.log.latestCheckpoint();
    const latest = stored ? await this.published(stored) : null;
    return {
      vkey: stored?.vkey ?? this.vkey,
      checkpoint: latest?.checkpoint.note ?? null,
      tree_size: stored?.treeSize ?? 0,
      checkpoint_at: stored?.createdAt ?? null,
      checkpoint_url: `${this.baseUrl}/log/checkpoint`,
      tiles_url: `${this.baseUrl}/log/tile/`,
      ...(witnesses ? { witnesses: witnesses(latest?.witnessed ?? null) } : {}),
    };
  }
}
