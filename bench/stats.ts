// Small statistics for benchmark reports, no I/O: the median of per-round figures and a
// distribution-free confidence interval for it, so a report can say whether a figure's
// difference from a goal is more than this machine's noise between rounds.

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export type MedianInterval = { low: number; high: number; coverage: number };

/**
 * The narrowest interval between two order statistics that covers the true median with at least
 * `confidence`, assuming only that rounds are independent draws of the same distribution: the
 * k-th smallest and k-th largest value, with coverage 1 − 2·P(Binomial(n, ½) < k). Null when
 * there are too few rounds for that confidence (fewer than 6 for 95%).
 */
export function medianInterval(values: number[], confidence = 0.95): MedianInterval | null {
  const n = values.length;
  const sorted = [...values].sort((a, b) => a - b);
  let best: MedianInterval | null = null;
  let below = 0; // P(Binomial(n, ½) < k), for k = 1, 2, ...
  for (let k = 1; 2 * k <= n + 1; k++) {
    below += binomialHalf(n, k - 1);
    const coverage = 1 - 2 * below;
    if (coverage < confidence) break;
    best = { low: sorted[k - 1]!, high: sorted[n - k]!, coverage };
  }
  return best;
}

/** P(Binomial(n, ½) = k), computed in logs so large n does not overflow. */
function binomialHalf(n: number, k: number): number {
  let logChoose = 0;
  for (let i = 1; i <= k; i++) logChoose += Math.log(n - k + i) - Math.log(i);
  return Math.exp(logChoose - n * Math.LN2);
}
