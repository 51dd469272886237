// The teaching views' batch (samples and clipping ratios) of an iteration trace: what the
// playground's trainer posts for an iteration (src/rl/trainer.ts sampleRows, clippingView), read
// off the trace instead, so an own-model iteration shows in the Samples, KL shaping, Clipping and
// Three policies views as a playground run's does. The rule is the trainer's: the rows of the
// update's last step (the last epoch's last minibatch), each token's ratio π_new/π_old taken at that
// step's forward pass, exp(clamp(log π_new − log π_old, ±LOG_RATIO_CLAMP)).
import { gatherRows } from '../rl/inspect/recompute.ts';
import { actorPolicyParams } from '../rl/policyParams.ts';
import { maskedRatios, sequenceRatios } from '../rl/ratios.ts';
import { SAMPLE_ROWS, type SampleRow, type SampleToken, type SampleTokenSource, sampleToken } from '../rl/samples.ts';
import { covSelectRef, covStepSeed, LOG_RATIO_CLAMP, tisWeightsRef } from '../reference/policyLoss.ts';
import type { RunBatch } from './batches.ts';
import type { CapturedTrace } from './inspection.ts';

const COV_MODES: readonly string[] = ['clip_cov', 'kl_cov'];

/** The response's text: its tokens' text, the EOS that ended it left out (as the task read it). */
function responseText(texts: readonly string[], endedWithEos: boolean | null): string {
  return (endedWithEos ? texts.slice(0, -1) : texts).join('');
}

/**
 * The teaching views' batch of a captured iteration: up to SAMPLE_ROWS rows of its last update
 * step with each action token's quantities, and the ratios of every token of that step; empty for
 * a trace without an update step (a file's, damaged or hand-made).
 */
export function traceBatch(c: Pick<CapturedTrace, 'trace' | 'prompts' | 'tokenText' | 'endedWithEos'>): RunBatch {
  const t = c.trace;
  const { A, knobs: k, stored: e } = t;
  const step = t.minibatches.at(-1);
  if (!step) return { samples: null, ratios: null };
  const n = step.rows.length;
  const rows = (x: ArrayLike<number>) => gatherRows(x, A, step.rows);
  // The tokens the loss saw: rejection sampling's mask when it was on (the trainer's own).
  const lossMask = rows(e.rsMask ?? t.actionMask);
  const old = rows(t.oldLogprobs);
  const adv = rows(e.advantages);
  const ratio = tisWeightsRef(step.newLogprobs, old, lossMask, Math.exp(LOG_RATIO_CLAMP)); // (n, A)
  const covPicked = COV_MODES.includes(k.lossMode)
    ? covSelectRef(old, step.newLogprobs, adv, lossMask, n, A, actorPolicyParams(k, covStepSeed(k.seed ?? 0, t.iter, step.epoch, step.index)))
    : null;

  const source: SampleTokenSource = { ...e, values: t.values, refLogprobs: t.refLogprobs, oldLogprobs: t.oldLogprobs, rolloutLogprobs: t.rolloutLogprobs };
  const sampleRows: SampleRow[] = [];
  for (let i = 0; i < Math.min(SAMPLE_ROWS, n); i++) {
    const b = step.rows[i];
    const tokens: SampleToken[] = [];
    const texts: string[] = [];
    for (let a = 0; a < A; a++) {
      const kk = b * A + a;
      if (t.actionMask[kk] === 0) continue;
      tokens.push(
        sampleToken(source, kk, c.tokenText[kk], ratio[i * A + a], {
          newLogprob: step.newLogprobs[i * A + a],
          covPicked: covPicked ? covPicked[i * A + a] === 1 : undefined,
        }),
      );
      texts.push(c.tokenText[kk]);
    }
    const endedWithEos = c.endedWithEos?.[b] ?? null;
    sampleRows.push({ prompt: c.prompts[b], response: responseText(texts, endedWithEos), reward: t.scores[b], endedWithEos, tokens });
  }

  const seq = sequenceRatios(step.newLogprobs, old, adv, lossMask, A);
  return {
    samples: { iter: t.iter, rows: sampleRows },
    ratios: {
      iter: t.iter,
      ...maskedRatios(ratio, adv, lossMask),
      seqRatios: seq.ratios,
      seqAdvantages: seq.advantages,
      clip: { clipLow: k.clipLow, clipHigh: k.clipHigh, dualClip: k.dualClip },
    },
  };
}
