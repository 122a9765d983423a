// Reading the anchors (log_v1 §5): `/v1/anchors` (newest first, paged), the `.ots` files, the
// anchoring section of /transparency and the `anchor_proof` of /proof. Everything is read from what
// the anchoring job stored.
import { b64Encode } from '../core/base64.ts';
import type { AnchorReader, StoredAnchor } from './port.ts';
import type { LogReader } from '../log/port.ts';

export const OTS_MEDIA_TYPE = 'application/vnd.opentimestamps.v1';

export type AnchorView = {
  tree_size: number;
  root: string;
  status: 'pending' | 'confirmed';
  calendars: string[];
  created_at: string;
  block_height: number | null;
  block_hash: string | null;
  block_merkle_root: string | null;
  block_time: string | null;
  ots_url: string;
};

export type AnchorProofView = AnchorView & { checkpoint: string | null; ots: string };

export class AnchorReads {
  constructor(private readonly anchors: AnchorReader, private readonly log: LogReader, private readonly baseUrl: string) {}

  view(a: StoredAnchor): AnchorView {
    return {
      tree_size: a.treeSize,
      root: a.root,
      status: a.status,
      calendars: a.calendars,
      created_at: a.createdAt,
      block_height: a.block?.height ?? null,
      block_hash: a.block?.hash ?? null,
      block_merkle_root: a.block?.merkleRoot ?? null,
      block_time: a.block ? new Date(a.block.time * 1000).toISOString() : null,
      ots_url: `${this.baseUrl}/anchors/${a.treeSize}.ots`,
    };
  }

  /** GET /v1/anchors: a page newest first; `cursor` is the last tree size of the previous page. */
  async list(limit: number, cursor?: number) {
    const rows = await this.anchors.list(limit + 1, cursor);
    const page = rows.slice(0, limit);
    const more = rows.length > limit;
    const nextCursor = more ? page[page.length - 1]!.treeSize : null;
    return {
      object: 'list' as const,
      url: '/v1/anchors' as const,
      data: page.map((a) => this.view(a)),
      has_more: more,
      next_cursor: nextCursor,
      next: nextCursor === null ? null : `${this.baseUrl}/anchors?limit=${limit}&cursor=${nextCursor}`,
    };
  }

  /** The `.ots` file of the checkpoint of this tree size; null when it is not anchored. */
  async file(treeSize: number): Promise<{ bytes: Uint8Array; status: StoredAnchor['status'] } | null> {
    const a = await this.anchors.at(treeSize);
    return a ? { bytes: a.ots, status: a.status } : null;
  }

  /** The anchoring section of /transparency. */
  async transparency() {
    const [counts, confirmed, pending, since] = await Promise.all([
      this.anchors.counts(), this.anchors.latest('confirmed'), this.anchors.latest('pending'), this.anchors.calendarsUnreachableSince(),
    ]);
    const note = since
      ? `The OpenTimestamps calendars are unreachable since ${since}; anchoring retries with backoff. Records, the log and its checkpoints are not affected.`
      : counts.confirmed + counts.pending === 0
        ? 'No checkpoint is anchored yet: each new checkpoint is timestamped on the OpenTimestamps calendars, and confirmed in a Bitcoin block within hours.'
        : 'Checkpoints of the global log are timestamped on OpenTimestamps calendars and confirmed against Bitcoin block headers; early anchors take hours to confirm.';
    return {
      live: true,
      anchored_roots: counts.confirmed,
      pending_roots: counts.pending,
      latest_confirmed: confirmed ? this.view(confirmed) : null,
      latest_pending: pending ? this.view(pending) : null,
      calendars_unreachable_since: since,
      anchors_url: `${this.baseUrl}/anchors`,
      note,
    };
  }

  /**
   * The `anchor_proof` of /proof: the anchor of the smallest confirmed checkpoint covering the
   * record (else the smallest pending one), with that checkpoint and the `.ots` file; null before.
   */
  async proofSection(recordId: string): Promise<{ anchor_proof: AnchorProofView | null }> {
    const leaf = await this.log.leafOf(recordId);
    if (!leaf) return { anchor_proof: null };
    const anchor = (await this.anchors.covering(leaf.logIndex, 'confirmed')) ?? (await this.anchors.covering(leaf.logIndex, 'pending'));
    if (!anchor) return { anchor_proof: null };
    const checkpoint = await this.log.checkpointAt(anchor.treeSize);
    return { anchor_proof: { ...this.view(anchor), checkpoint: checkpoint?.note ?? null, ots: b64Encode(anchor.ots) } };
  }
}
