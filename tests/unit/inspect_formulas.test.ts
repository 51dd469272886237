// The walk-through's formulas: every step substitutes this response's numbers, never NaN, and
// names the verl / OpenRLHF functions of the step.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  defaultToken,
  FORMULA_STEPS,
  FORMULA_TEXT,
  formulaStep,
  recomputeTrace,
  texNumber,
  tokenTable,
  type FormulaContext,
  type InspectKnobs,
} from '../../src/rl/inspect/index.ts';
import { buildTrace, type TraceSpec } from '../helpers/inspectTrace.ts';
import { rng } from '../helpers/random.ts';

describe('texNumber', () => {
  it('writes 4 significant digits, powers of ten in LaTeX, and 0 for −0', () => {
    expect([texNumber(0), texNumber(-0), texNumber(1), texNumber(-0.5), texNumber(0.123456), texNumber(-12.3456), texNumber(1234.5678)]).toEqual([
      '0',
      '0',
      '1',
      '-0.5',
      '0.1235',
      '-12.35',
      '1235',
    ]);
    expect([texNumber(1.23456e-5), texNumber(-3e7), texNumber(2e-300)]).toEqual(['1.235\\times10^{-5}', '-3\\times10^{7}', '2\\times10^{-300}']);
  });
});

describe('FORMULA_STEPS', () => {
  it('walks rollout → reference and critic → reward shaping → advantages → whitening → ratio and clip → value loss → optimiser step', () => {
    expect(FORMULA_STEPS.map((s) => s.id)).toEqual(['rollout', 'referenceCritic', 'rewardShaping', 'advantages', 'whitening', 'ratioClip', 'valueLoss', 'optimiserStep']);
    for (const s of FORMULA_STEPS) {
      expect(s.title).toBe(FORMULA_TEXT.steps[s.id].title);
      expect(s.why).toBe(FORMULA_TEXT.steps[s.id].why);
      expect(s.why.endsWith('.')).toBe(true);
      expect(s.verl.length + s.openrlhf.length).toBeGreaterThan(0);
      for (const name of [...s.verl, ...s.openrlhf]) expect(name).toMatch(/^[A-Za-z_]+$/);
      expect(formulaStep(s.id)).toBe(s);
    }
  });

  it('names the verl functions that tests/helpers/verl.ts transliterates', () => {
    const verlHelper = readFileSync(resolve(import.meta.dirname, '../helpers/verl.ts'), 'utf8');
    const named = [
      'kl_penalty',
      'compute_grpo_outcome_advantage',
      'compute_rloo_outcome_advantage',
      'masked_whiten',
      'compute_policy_loss_vanilla',
      'compute_policy_loss_gspo',
      'compute_policy_loss_cispo',
      'compute_policy_loss_sapo',
      'compute_policy_loss_gpg',
      'compute_policy_loss_geo_mean',
      'compute_policy_loss_clip_cov',
      'compute_policy_loss_kl_cov',
      'agg_loss',
      'compute_opo_outcome_advantage',
      'compute_grpo_passk_outcome_advantage',
      'compute_remax_outcome_advantage',
    ];
    const all = FORMULA_STEPS.flatMap((s) => s.verl);
    for (const name of named) {
      expect(all).toContain(name);
      expect(verlHelper).toContain(name);
    }
  });
});

const SETUPS: [string, TraceSpec][] = [
  ['GAE, dual clip, value clip, TIS, KL loss', { holeRow: 0, allMaskedRow: 1, lengthOneRow: 2, knobs: { tisCap: 2, useKlLoss: true, klEstimator: 'k1_clamped' } }],
  ['GAE, extreme log-probs, no dual clip', { extreme: true, newSpread: 3, knobs: { dualClip: null, klEstimator: 'k3' } }],
  ['GRPO, whitening off, GSPO', { equalScores: true, knobs: { advantageEstimator: 'group_norm', whiten: false, lossMode: 'gspo' } }],
  ['RLOO, CISPO', { allMaskedRow: 3, knobs: { advantageEstimator: 'rloo', whiten: false, lossMode: 'cispo' } }],
  ['REINFORCE++, whitened', { knobs: { advantageEstimator: 'reinforce', whiten: true } }],
  ['GRPO, SAPO, TIS', { allMaskedRow: 1, knobs: { advantageEstimator: 'group_norm', lossMode: 'sapo', tisCap: 2 } }],
  ['RLOO, GPG', { lengthOneRow: 2, knobs: { advantageEstimator: 'rloo', lossMode: 'gpg' } }],
  ['OPO, length-1 row', { lengthOneRow: 2, knobs: { advantageEstimator: 'opo', whiten: false } }],
  ['GRPO pass@k, equal scores', { equalScores: true, knobs: { advantageEstimator: 'grpo_passk', whiten: false } }],
  ['GRPO pass@k', { knobs: { advantageEstimator: 'grpo_passk', whiten: false } }],
  ['ReMax, masked middle position', { holeRow: 3, knobs: { advantageEstimator: 'remax', whiten: false } }],
  ['GRPO, GMPO (geo_mean), TIS, extreme', { allMaskedRow: 0, extreme: true, knobs: { advantageEstimator: 'group_norm', lossMode: 'geo_mean', tisCap: 2 } }],
  [
    'GRPO, Clip-Cov, extreme',
    { allMaskedRow: 1, extreme: true, knobs: { advantageEstimator: 'group_norm', lossMode: 'clip_cov', clipCovRatio: 0.3, clipCovLb: -2, clipCovUb: 2, seed: 5 } },
  ],
  ['GAE, KL-Cov, length-one row', { lengthOneRow: 2, knobs: { lossMode: 'kl_cov', klCovRatio: 0.3, ppoKlCoef: 0.5 } }],
];

describe('clip_cov / kl_cov in the ratio step', () => {
  for (const lossMode of ['clip_cov', 'kl_cov'] as const) {
    it(`${lossMode}: the indicator 1[t ∈ S] is 1 exactly on the tokens the step picked`, () => {
      const trace = buildTrace(rng(970), { knobs: { lossMode, clipCovRatio: 0.3, clipCovLb: -2, clipCovUb: 2, klCovRatio: 0.3, ppoKlCoef: 0.5, seed: 5 } });
      const rec = recomputeTrace(trace);
      expect(formulaStep('ratioClip').template(trace.knobs)).toContain('\\mathbb{1}[t \\in S]');
      let picked = 0;
      for (let row = 0; row < trace.B; row++) {
        const table = tokenTable(trace, row, rec);
        table.rows.forEach((tok, t) => {
          if (tok.masked || tok.updates.length === 0) return;
          const cell = tok.updates[0];
          const tex = formulaStep('ratioClip').substitute({ trace, rec, row, t, update: 0 });
          expect(tex).toContain(lossMode === 'clip_cov' ? `(1 - ${cell.covPicked ? 1 : 0})` : `\\cdot ${cell.covPicked ? 1 : 0}\\cdot`);
          if (cell.covPicked) picked++;
          if (cell.covPicked && lossMode === 'clip_cov') expect(cell.tokenLoss).toBe(0);
        });
      }
      expect(picked).toBeGreaterThan(0);
    });
  }
});

describe('substitute', () => {
  SETUPS.forEach(([name, spec], c) => {
    it(`gives LaTeX without NaN or undefined for every step, row and position: ${name}`, () => {
      const trace = buildTrace(rng(900 + c), spec);
      const rec = recomputeTrace(trace);
      for (const s of FORMULA_STEPS) {
        const tpl = s.template(trace.knobs);
        expect(tpl.length).toBeGreaterThan(0);
        expect(tpl).not.toMatch(/NaN|undefined|null/);
      }
      for (let row = 0; row < trace.B; row++) {
        for (let t = 0; t < trace.A; t++) {
          for (const s of FORMULA_STEPS) {
            for (const update of [0, 1, 5]) {
              const tex = s.substitute({ trace, rec, row, t, update });
              expect(tex.length, `${s.id} at ${row},${t}`).toBeGreaterThan(0);
              expect(tex, `${s.id} at ${row},${t}`).not.toMatch(/NaN|undefined|null|Infinity|\\infty/);
              // an unescaped _ inside \text{} is a LaTeX error
              expect(tex, `${s.id} at ${row},${t}`).not.toMatch(/\\text\{[^}]*[^\\]_/);
            }
          }
        }
      }
    });
  });

  it('puts this token’s numbers into each step (GAE)', () => {
    const trace = buildTrace(rng(950), { knobs: { tisCap: 2 } });
    const rec = recomputeTrace(trace);
    const row = 3;
    const t = defaultToken(trace, row);
    expect(t).toBeGreaterThanOrEqual(0);
    const tok = tokenTable(trace, row, rec).rows[t];
    const cell = tok.updates[1];
    const ctx: FormulaContext = { trace, rec, row, t, update: 1 };
    const sub = (id: Parameters<typeof formulaStep>[0]) => formulaStep(id).substitute(ctx);
    const has = (tex: string, ...xs: number[]) => {
      for (const x of xs) expect(tex).toContain(texNumber(x));
    };
    has(sub('rollout'), tok.rolloutLogprob!);
    expect(sub('rollout')).toContain(`a_{${t}} = ${tok.token}`);
    // With the tokens' text, a_t is the token as text (the id beside it), not the vocabulary id alone.
    const tokenText = Array.from(trace.responseTokens, (id, i) => (i === row * trace.A + t ? '<eos>' : String(id)));
    const named = formulaStep('rollout').substitute({ ...ctx, tokenText });
    expect(named).toContain(`a_{${t}} = \\texttt{“<eos>”}`);
    expect(named).toContain(`${FORMULA_TEXT.notes.tokenId}}\\ ${tok.token})`);
    has(sub('referenceCritic'), tok.oldLogprob, tok.refLogprob, tok.value!);
    has(sub('rewardShaping'), tok.oldLogprob, tok.kl, tok.reward, rec.rewardBeta, trace.scores[row]);
    has(sub('advantages'), tok.reward, tok.value!, tok.delta!, tok.advantageRaw, tok.return, trace.knobs.gamma * trace.knobs.lam);
    // Whitening names μ and σ (√ of the Bessel-corrected variance), not only 1/σ.
    has(sub('whitening'), tok.advantageRaw, rec.whitening!.mean, Math.sqrt(rec.whitening!.variance), tok.advantage);
    expect(sub('whitening')).toContain(`(n = ${rec.whitening!.n})`);
    has(sub('ratioClip'), cell.newLogprob, cell.ratio, cell.tokenLoss, 1 - trace.knobs.clipLow, 1 + trace.knobs.clipHigh);
    // The note sits in \text{…}, where LaTeX needs _ escaped ("ε_high" is written ε\_high).
    expect(sub('ratioClip')).toContain(FORMULA_TEXT.notes.clip[cell.clipSide].replace(/[_%&#$]/g, (c) => `\\${c}`));
    has(sub('valueLoss'), cell.value!.newValue, tok.return, cell.value!.unclipped, cell.value!.clippedTerm, cell.value!.loss);
    has(sub('optimiserStep'), cell.aggWeight, cell.gradWeight, rec.minibatches.find((m) => m.epoch === cell.epoch && m.index === cell.minibatch)!.stats.policyLoss);
  });

  it('puts the group’s numbers into the advantage step of a group estimator, and the what-if’s β into the rewards', () => {
    const trace = buildTrace(rng(951), { knobs: { advantageEstimator: 'group_norm', whiten: false } });
    const knobs: InspectKnobs = { ...trace.knobs, klCoef: 0.5 };
    const rec = recomputeTrace(trace, knobs);
    const row = 6;
    const t = defaultToken(trace, row);
    const table = tokenTable(trace, row, rec);
    const g = table.group!;
    const adv = formulaStep('advantages').substitute({ trace, rec, row, t });
    for (const x of [trace.scores[row], g.mean, g.std, g.transformedScore, table.rows[t].advantageRaw]) expect(adv).toContain(texNumber(x));
    expect(formulaStep('advantages').template(knobs)).toContain('\\sigma_g');
    expect(formulaStep('rewardShaping').substitute({ trace, rec, row, t })).toContain(`-${texNumber(0.5)}`);
    expect(formulaStep('referenceCritic').substitute({ trace, rec, row, t })).toContain(FORMULA_TEXT.notes.noCritic);
    expect(formulaStep('whitening').substitute({ trace, rec, row, t })).toContain(FORMULA_TEXT.notes.whiteningOff);
  });

  it('shows OPO’s length-weighted baseline, pass@k’s gap and ReMax’s G_t − b with this response’s numbers', () => {
    for (const est of ['opo', 'grpo_passk', 'remax'] as const) {
      const trace = buildTrace(rng(961), { knobs: { advantageEstimator: est, whiten: false } });
      const rec = recomputeTrace(trace);
      for (let row = 0; row < trace.B; row++) {
        const t = defaultToken(trace, row);
        const table = tokenTable(trace, row, rec);
        const adv = formulaStep('advantages').substitute({ trace, rec, row, t });
        expect(adv, `${est} row ${row}`).toContain(texNumber(table.group!.transformedScore));
        expect(adv, `${est} row ${row}`).toContain(texNumber(table.rows[t].advantageRaw));
        if (est === 'remax') expect(adv).toContain(texNumber(table.rows[t].return - trace.baselines![row]));
        if (est === 'opo') expect(adv).toContain(texNumber(trace.scores[row]));
      }
      expect(formulaStep('advantages').template(trace.knobs)).toContain(est === 'remax' ? 'b_{\\text{greedy}}' : est === 'opo' ? '\\ell_j' : 's_{(2)}');
    }
  });

  it('says so for a masked position and for a token in no update step', () => {
    const trace = buildTrace(rng(952), { holeRow: 0, A: 6 });
    const rec = recomputeTrace(trace);
    const hole = 3; // buildTrace masks position ⌊A/2⌋ of the hole row
    expect(trace.actionMask[hole]).toBe(0);
    for (const id of ['ratioClip', 'valueLoss'] as const) expect(formulaStep(id).substitute({ trace, rec, row: 0, t: hole })).toContain(FORMULA_TEXT.notes.masked);
    const none = formulaStep('ratioClip').substitute({ trace, rec: { ...rec, minibatches: [] }, row: 0, t: 0 });
    expect(none).toContain(FORMULA_TEXT.notes.noUpdate);
  });
});
