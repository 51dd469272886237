// Which token-table columns each walk-through step is about, and the reverse scan's formula at
// one position with its numbers: pure, so the table and the scan read the same definitions.
import { type FormulaStepId, type ScanStep, texFactor, texNumber } from '../../rl/inspect/index.ts';

export type ColumnKey =
  | 'token'
  | 'mask'
  | 'rollout'
  | 'old'
  | 'ref'
  | 'kl'
  | 'klPen'
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
  advantages: ['reward', 'value', 'delta', 'advRaw', 'ret'],
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
