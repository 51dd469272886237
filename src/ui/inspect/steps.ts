// Which token-table columns each walk-through step is about, the frameworks' names for the
// columns that hold one of their tensors, and the reverse scan's formula at one position with its
// numbers: pure, so the table, the Experience view and the scan read the same definitions.
import { type FieldWhat, type FormulaStepId, type IterationTrace, openrlhfExperience, type ScanStep, texFactor, texNumber, verlBatch } from '../../rl/inspect/index.ts';

export type ColumnKey =
  | 'token'
  | 'mask'
  | 'rollout'
  | 'old'
  | 'ref'
  | 'kl'
  | 'klPen'
  | 'normScore'
  | 'reward'
  | 'value'
  | 'delta'
  | 'advRaw'
  | 'adv'
  | 'ret'
  | 'newLp'
  | 'ratio'
  | 'clip'
  | 'loss'
  | 'aggW'
  | 'grad'
  | 'klLossT'
  | 'vNew'
  | 'vUnclipped'
  | 'vClipTerm'
  | 'vLoss'
  | 'vClipped';

export const STEP_COLUMNS: Record<FormulaStepId, readonly ColumnKey[]> = {
  rollout: ['token', 'mask', 'rollout'],
  referenceCritic: ['old', 'ref', 'value'],
  rewardShaping: ['old', 'ref', 'kl', 'klPen', 'reward'],
  advantages: ['normScore', 'reward', 'value', 'delta', 'advRaw', 'ret'],
  whitening: ['advRaw', 'adv'],
  ratioClip: ['old', 'newLp', 'ratio', 'clip', 'loss'],
  valueLoss: ['ret', 'vNew', 'vUnclipped', 'vClipTerm', 'vLoss', 'vClipped'],
  optimiserStep: ['loss', 'aggW', 'grad', 'klLossT'],
};

/** The scan's update at one position with its numbers: A_t from δ_t and the carried A_{t+1}. */
export function scanStepTex(s: ScanStep, gae: boolean, gamma: number): string {
  const t = s.t;
  const sym = gae ? 'A' : 'G';
  if (s.masked) return `${sym}_{${t}} = ${sym}_{${t + 1}} = ${texNumber(s.advantage)}`;
  const carried = `${texNumber(s.carryFactor)}\\cdot${texFactor(s.carried)}`;
  if (!gae) return `${sym}_{${t}} = ${texNumber(s.reward)} + ${carried} = ${texNumber(s.advantage)}`;
  return (
    `\\delta_{${t}} = ${texNumber(s.reward)} + ${texNumber(gamma)}\\cdot${texFactor(s.nextValue)} - ${texFactor(s.value)} = ${texNumber(s.delta ?? 0)},\\quad ` +
    `A_{${t}} = ${texNumber(s.delta ?? 0)} + ${carried} = ${texNumber(s.advantage)}`
  );
}

/** The tensor a column shows, where it shows one of the Experience / DataProto fields as they are. */
const COLUMN_TENSOR: Partial<Record<ColumnKey, FieldWhat>> = {
  mask: 'actionMask',
  rollout: 'rolloutLogprobs',
  old: 'oldLogprobs',
  ref: 'refLogprobs',
  kl: 'kl',
  value: 'values',
  adv: 'advantages',
  ret: 'returns',
};

/**
 * The names OpenRLHF's Experience and verl's DataProto give each column's tensor (OpenRLHF's first);
 * r_t is verl's token_level_rewards only where the scan adds it as stored (GAE).
 */
export function columnFrameworkNames(trace: IterationTrace, critic: boolean): Partial<Record<ColumnKey, string[]>> {
  const fields = [...openrlhfExperience(trace), ...verlBatch(trace)];
  const cols: Partial<Record<ColumnKey, FieldWhat>> = { ...COLUMN_TENSOR, ...(critic ? { reward: 'tokenRewards' } : {}) };
  const out: Partial<Record<ColumnKey, string[]>> = {};
  for (const [col, what] of Object.entries(cols) as [ColumnKey, FieldWhat][]) out[col] = [...new Set(fields.filter((f) => f.what === what).map((f) => f.name))];
  return out;
}
