// The reads of one agent's records that the site's pages and badges make beside the public reads
// (reads.ts): the agent by handle, its record counts, its first record and a page of its
// decisions, newest first. Read-only, on the primary store.
import type { Agent, RecordCounts, StoredRecord } from '../../domain/types.ts';
import type { LedgerStore, Page } from '../../store/port.ts';

export class AgentRecords {
  constructor(private readonly store: LedgerStore) {}

  byHandle(handle: string): Promise<Agent | null> {
    return this.store.findAgentByHandle(handle);
  }

  counts(agentId: string): Promise<RecordCounts> {
    return this.store.countRecords(agentId);
  }

  /** The agent's first record (chain seq 1); undefined before it records anything. */
  async first(agentId: string): Promise<StoredRecord | undefined> {
    const [first] = await this.store.listChain(agentId, 0, 1);
    return first;
  }

  /** A page of the agent's decisions, newest first, before the record id `page.before`. */
  decisions(agentId: string, page: Page): Promise<StoredRecord[]> {
    return this.store.listAgentRecords(agentId, 'decision', page);
  }
}
