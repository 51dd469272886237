// pass@k: the chance that at least one of k draws for a prompt is correct, averaged over prompts.
// With n ≥ k draws per prompt of which c are correct, the unbiased estimator of Chen et al. 2021
// ("Evaluating Large Language Models Trained on Code", eq. 1) is
//   pass@k = 1 − C(n − c, k) / C(n, k) = 1 − Π_{i = n−c+1}^{n} (1 − k / i),
// the product form avoiding the large binomials. At k = n it is 1 when any draw is correct, else 0:
// the fraction of prompts with at least one correct draw. At k = 1 it is c / n (sampled accuracy).
// A falling pass@n while the sampled accuracy (pass@1) rises is the signature of entropy collapse:
// the draws of a prompt agree more often, so a wrong answer is no longer rescued by another draw.

/** Unbiased pass@k of one prompt with `c` correct of `n` draws (1 ≤ k ≤ n, 0 ≤ c ≤ n). */
export function passAtK(n: number, c: number, k: number): number {
  if (!(Number.isInteger(n) && Number.isInteger(c) && Number.isInteger(k)) || k < 1 || k > n || c < 0 || c > n) {
    throw new RangeError(`passAtK(n = ${n}, c = ${c}, k = ${k}): need integers with 1 ≤ k ≤ n and 0 ≤ c ≤ n`);
  }
  // Fewer than k wrong draws: every choice of k draws holds a correct one.
  if (n - c < k) return 1;
  let allWrong = 1; // C(n − c, k) / C(n, k)
  for (let i = n - c + 1; i <= n; i++) allWrong *= 1 - k / i;
  return 1 - allWrong;
}

/** The log name of pass@k over the held-out draws (k = draws per prompt): `pass_at_4` for 4. */
export const passAtKKey = (k: number): string => `pass_at_${k}`;

/**
 * Mean pass@k over prompts from per-draw correctness, the `draws` draws of each prompt consecutive
 * (prompt p's draws at p·draws … p·draws + draws − 1, as heldOutSamples lays them out).
 */
export function meanPassAtK(correct: readonly boolean[], draws: number, k: number): number {
  if (!Number.isInteger(draws) || draws < 1 || correct.length % draws !== 0 || correct.length === 0) {
    throw new RangeError(`meanPassAtK: ${correct.length} draws do not split into prompts of ${draws}`);
  }
  const prompts = correct.length / draws;
  let sum = 0;
  for (let p = 0; p < prompts; p++) {
    let c = 0;
    for (let j = 0; j < draws; j++) if (correct[p * draws + j]) c++;
    sum += passAtK(draws, c, k);
  }
  return sum / prompts;
}
