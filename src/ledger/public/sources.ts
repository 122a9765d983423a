// Where the public reads come from. Without a read replica, the primary store and nothing else.
// With one (a PostgreSQL streaming replica, LEDGER_READ_DATABASE_URL), the replica, which may be
// behind the primary by its replay lag, under two rules that keep the lag from contradicting what
// a writer was told:
//
// - A record the replica does not have is looked up on the primary when it may be newer than
//   the replica's newest record. Record ids follow commit order (store/port.ts), and a replica
//   replays commits in order, so a replica whose newest key is K holds every record below K:
//   a miss below K is a true 404, anything above is asked of the primary. A writer's proof link
//   is therefore never a 404, however far behind the replica is.
// - A chain page asked for after the replica's head comes from the primary (the head and the
//   records of one answer always come from one store), so a proof's chain_from_here link shows
//   its record. An agent the replica does not know yet is looked up on the primary too.
//
// Everything else (the ledger page, profiles, exports, transparency) may be as stale as the
// replica is behind. A replica that cannot answer (StoreUnavailable, and then no ping either) is
// left alone for a while: reads go to the primary meanwhile, and `onReplica` says so once each way.
import type { Agent, ChainHead, StoredRecord } from '../../domain/types.ts';
import { StoreUnavailable, type LedgerStore } from '../../store/port.ts';
import { sortKeyOf } from '../../core/chain.ts';

/** How long reads stay on the primary after the replica failed, before the replica is tried again. */
export const REPLICA_RETRY_MS = 5_000;

export type Located<T> = { value: T; store: LedgerStore };

async function answers(store: LedgerStore): Promise<boolean> {
  try {
    await store.ping();
    return true;
  } catch {
    return false;
  }
}

export type ReplicaOptions = {
  replica: LedgerStore | null;
  /** Told when the replica stops answering (`up` false) and when reads use it again. */
  onReplica?: (up: boolean, reason: string) => void;
  now?: () => number;
};

export class ReadSources {
  private readonly replica: LedgerStore | null;
  private replicaDownUntil = 0;
  private replicaDown = false;

  constructor(private readonly primary: LedgerStore, private readonly options: ReplicaOptions = { replica: null }) {
    this.replica = options.replica;
  }

  /**
   * Runs a public read on the replica, or on the primary when there is none or it is down. A read
   * the replica fails (StoreUnavailable) is run again on the primary.
   */
  async read<T>(work: (store: LedgerStore) => Promise<T>): Promise<T> {
    const replica = this.usableReplica();
    if (!replica) return work(this.primary);
    try {
      const result = await work(replica);
      this.replicaAnswered();
      return result;
    } catch (err) {
      if (!(err instanceof StoreUnavailable)) throw err;
      // A read on the replica may have asked the primary (a newer record): if the replica still
      // answers, it was the primary that failed, and the caller gets that failure.
      if (await answers(replica)) throw err;
      this.replicaFailed(err);
      return work(this.primary);
    }
  }

  /** The record with this id: from `store`, or from the primary when `store` is a replica that may not have it yet. */
  async record(store: LedgerStore, id: string): Promise<Located<StoredRecord> | null> {
    const found = await store.findRecord(id);
    if (found) return { value: found, store };
    if (store === this.primary) return null;
    // Read the replica's newest key, then look again: a record replayed between the first look
    // and this one is found by the second, so a miss below the newest key is certain.
    const newest = await store.newestSortKey();
    const again = await store.findRecord(id);
    if (again) return { value: again, store };
    if (newest !== null && sortKeyOf(id) <= newest) return null;
    const fresh = await this.primary.findRecord(id);
    return fresh ? { value: fresh, store: this.primary } : null;
  }

  /** The agent with this handle: from `store`, or from the primary when `store` is a replica that does not know it yet. */
  async agentByHandle(store: LedgerStore, handle: string): Promise<Located<Agent> | null> {
    const found = await store.findAgentByHandle(handle);
    if (found) return { value: found, store };
    if (store === this.primary) return null;
    const fresh = await this.primary.findAgentByHandle(handle);
    return fresh ? { value: fresh, store: this.primary } : null;
  }

  /** The agent's head, and where to read its chain after `afterSeq`: the primary when a replica has nothing after it. */
  async chain(store: LedgerStore, agentId: string, afterSeq: number): Promise<Located<ChainHead>> {
    const head = await store.chainHead(agentId);
    if (store === this.primary || afterSeq < head.seq) return { value: head, store };
    return { value: await this.primary.chainHead(agentId), store: this.primary };
  }

  private usableReplica(): LedgerStore | null {
    const now = this.options.now?.() ?? Date.now();
    return this.replica && now >= this.replicaDownUntil ? this.replica : null;
  }

  private replicaFailed(err: StoreUnavailable): void {
    this.replicaDownUntil = (this.options.now?.() ?? Date.now()) + REPLICA_RETRY_MS;
    if (this.replicaDown) return;
    this.replicaDown = true;
    this.options.onReplica?.(false, err.message);
  }

  private replicaAnswered(): void {
    if (!this.replicaDown) return;
    this.replicaDown = false;
    this.options.onReplica?.(true, 'the read replica answers again');
  }
}
