// Small text statistics shared by the task evaluators.

/** Words = maximal runs of letters or digits; punctuation and spaces separate them. */
export function words(text: string): string[] {
  return text.toLowerCase().match(/[a-z0-9]+/g) ?? [];
}

/**
 * distinct-n (Li et al., 2016): unique word n-grams / total word n-grams, pooled over all texts.
 * n-grams never cross text boundaries. 0 when there are no n-grams at all, so a collapsed policy
 * that emits nothing reads as no diversity rather than NaN.
 */
export function distinctN(texts: string[], n: number): number {
  if (!Number.isInteger(n) || n < 1) throw new Error(`distinctN needs a positive integer n, got ${n}`);
  const seen = new Set<string>();
  let total = 0;
  for (const t of texts) {
    const w = words(t);
    for (let i = 0; i + n <= w.length; i++) {
      seen.add(w.slice(i, i + n).join(' '));
      total++;
    }
  }
  return total === 0 ? 0 : seen.size / total;
}

/** Arithmetic mean; 0 for an empty list (metrics of an empty batch are reported, not NaN). */
export function mean(xs: number[]): number {
  return xs.length === 0 ? 0 : xs.reduce((s, x) => s + x, 0) / xs.length;
}

/** Share of items for which `pred` holds; 0 for an empty list. */
export function rate<T>(xs: T[], pred: (x: T) => boolean): number {
  return xs.length === 0 ? 0 : xs.filter(pred).length / xs.length;
}
