// The site port's SQL, one text for both adapters.

/** One SQL text for both dialects; `list` is the placeholder(s) of the decision ids, `cap` that of perDecision. */
export function linkedExecutionsSql(list: string, cap: string): string {
  return `SELECT * FROM (
      SELECT f.decision_id AS linked_decision,
        ROW_NUMBER() OVER (PARTITION BY f.decision_id ORDER BY r.sort_key) AS link_n,
        COUNT(*) OVER (PARTITION BY f.decision_id) AS link_total,
        r.id, r.agent_id, a.handle, r.type, r.chain_seq, r.recorded_at, r.symbol, r.content,
        r.content_hash, r.prev_hash, r.chain_hash, r.signature, r.link_token, r.sort_key
      FROM broker_fills f JOIN records r ON r.id = f.record_id JOIN agents a ON a.id = r.agent_id
      WHERE f.decision_id IN (${list})
    ) linked WHERE link_n <= ${cap} ORDER BY linked_decision, sort_key`;
}
