// DAPO's dynamic sampling (verl recipe/dapo): groups whose final scores are all equal carry no
// group-relative signal, so they are dropped and further rounds of fresh prompts are sampled until
// promptsPerBatch informative groups are found or maxExtraRollouts extra rounds are spent. A batch
// still short is filled with dropped groups (in sampling order) so its shape never changes; verl
// instead raises an error when max_num_gen_batches is exhausted, and the page must not stop.
// Each round is sampled and read back on its own: what comes next depends on its scores.
import type { CharTokenizer } from '../model/tokenizer.ts';
import type { TaskSample } from '../tasks/task.ts';
import type { PpoConfig } from './config.ts';
import { informativeGroups } from './dapo.ts';
import type { MetricValues } from './metricNames.ts';
import { concatRows, decodeSamples, type RolloutBatch } from './rollout.ts';

export interface ScoredBatch {
  r: RolloutBatch;
  samples: TaskSample[];
  scores: Float64Array; // (B) final scores
  /** Rollout-stage metrics of the sampling itself (DAPO's filter counts; empty without it). */
  metrics: MetricValues;
}

/** The batch of DAPO round after round; `sampleRound(round)` samples and scores one round. */
export async function dynamicSampledBatch(
  cfg: Pick<PpoConfig, 'maxExtraRollouts' | 'promptsPerBatch'>,
  tok: CharTokenizer,
  sampleRound: (round: number) => Promise<{ r: RolloutBatch; scores: Float64Array }>,
): Promise<ScoredBatch> {
  const parts: RolloutBatch[] = [];
  const partScores: Float64Array[] = [];
  const kept: { part: number; g: number }[] = [];
  const dropped: { part: number; g: number }[] = [];
  let rounds = 0;
  for (let round = 0; round <= cfg.maxExtraRollouts && kept.length < cfg.promptsPerBatch; round++) {
    const { r, scores } = await sampleRound(round);
    const part = parts.length;
    parts.push(r);
    partScores.push(scores);
    const split = informativeGroups(scores, r.group);
    for (const g of split.kept) kept.push({ part, g });
    for (const g of split.dropped) dropped.push({ part, g });
    rounds++;
  }
  const chosen = [...kept, ...dropped].slice(0, cfg.promptsPerBatch);
  const rows: { part: number; row: number }[] = [];
  for (const { part, g } of chosen) {
    parts[part].group.forEach((gg, row) => {
      if (gg === g) rows.push({ part, row });
    });
  }
  const r = concatRows(parts, rows);
  return {
    r,
    samples: decodeSamples(r, tok),
    scores: Float64Array.from(rows, ({ part, row }) => partScores[part][row]),
    metrics: {
      filtered_groups: dropped.length,
      dynamic_sampling_rounds: rounds,
      filled_with_filtered: Math.max(0, cfg.promptsPerBatch - kept.length),
    },
  };
}
