// Addresses of the public reads, as published in bodies and Link headers: built in one place so
// every document names the same URL for the same thing.
export class PublicUrls {
  constructor(private readonly baseUrl: string) {}

  private url(path: string): string {
    return `${this.baseUrl}${path}`;
  }

  chainUrl(handle: string, q: { afterSeq?: number; limit?: number; payloads?: boolean } = {}): string {
    const params = new URLSearchParams();
    if (q.afterSeq !== undefined && q.afterSeq > 0) params.set('after_seq', String(q.afterSeq));
    if (q.limit !== undefined) params.set('limit', String(q.limit));
    if (q.payloads === false) params.set('payloads', 'false');
    const query = params.toString();
    return this.url(`/agents/${encodeURIComponent(handle)}/chain${query ? `?${query}` : ''}`);
  }

  profileUrl(handle: string): string {
    return this.url(`/agents/${encodeURIComponent(handle)}`);
  }

  performanceUrl(handle: string, portfolio: string, format: 'json' | 'csv' = 'json'): string {
    return this.url(`/agents/${encodeURIComponent(handle)}/performance?portfolio=${portfolio}${format === 'csv' ? '&format=csv' : ''}`);
  }

  /** The decision outcomes of the model portfolio, from the page after `cursor` (an opaque text the service wrote). */
  outcomesUrl(handle: string, q: { cursor?: string | null; limit?: number; format?: 'json' | 'csv' } = {}): string {
    const params = new URLSearchParams({ portfolio: 'model' });
    if (q.limit !== undefined) params.set('limit', String(q.limit));
    if (q.cursor) params.set('cursor', q.cursor);
    if (q.format === 'csv') params.set('format', 'csv');
    return this.url(`/agents/${encodeURIComponent(handle)}/performance/outcomes?${params.toString()}`);
  }

  exportUrl(handle: string): string {
    return this.url(`/export?agent=${encodeURIComponent(handle)}`);
  }

  proofUrl(id: string): string {
    return this.url(`/proof/${encodeURIComponent(id)}`);
  }

  ledgerUrl(params: URLSearchParams): string {
    return this.url(`/ledger?${params.toString()}`);
  }
}
