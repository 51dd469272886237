// "Check yourself": questions drawn from one inspected iteration, whose answers the page knows
// exactly because they are the iteration's own numbers. Each shows the numbers it needs, rounded as
// the inspector shows them, and asks for one the trainer computed from them:
//   gae       A_t = δ_t + γλ·A_{t+1}                  (GAE, before whitening)
//   kl        −β·KL_t                                  (KL in the reward; the trainer's KL_t)
//   whiten    Â_t = (A_t − μ)/√(σ² + 1e-8)             (the trainer's whitened advantage)
//   group     s̃ of a response from its group's scores  (GRPO / Dr. GRPO / RLOO; the trainer's advantage)
//   clip      which of a step's tokens the clip stopped, and on which side
// A typed number is right within ANSWER_TOLERANCE of the answer. The kinds an iteration does not
// have (no critic, no KL in the reward, no whitening, no clipped-ratio loss) are left out.
import { Rng } from '../../util/rng.ts';
import type { FormulaStepId } from './formulas.ts';
import type { RecomputedTrace } from './recompute.ts';
import { type TokenRow, tokenTable } from './table.ts';
import type { ClipSide } from './tokenTerms.ts';
import type { IterationTrace } from './trace.ts';

export const QUESTION_KINDS = ['gae', 'kl', 'whiten', 'group', 'clip'] as const;
export type QuestionKind = (typeof QUESTION_KINDS)[number];

/** A number shown with a question: its symbol (LaTeX) and value. */
export interface Given {
  tex: string;
  value: number;
}

interface QuestionBase {
  kind: QuestionKind;
  /** Batch row of the response asked about. */
  row: number;
  /** The walk-through step that works the answer out, shown once answered. */
  step: FormulaStepId;
  /** Response position the walk-through step is evaluated at. */
  t: number;
}

export interface NumberQuestion extends QuestionBase {
  kind: 'gae' | 'kl' | 'whiten' | 'group';
  /** The numbers the question shows. */
  given: Given[];
  /** What is asked for, in LaTeX (A_3, −β·KL_3, Â_3, s̃). */
  asked: string;
  answer: number;
  /** The trainer's own tensor, or its float64 recomputation from the trainer's inputs (GAE's A_t before whitening is not kept). */
  source: 'trainer' | 'recomputed';
}

export interface ClipToken {
  t: number;
  ratio: number;
  advantage: number;
  side: ClipSide;
}

export interface ClipQuestion extends QuestionBase {
  kind: 'clip';
  /** The update step the ratios are from, as an index into each token's update cells (TokenRow.updates). */
  update: number;
  epoch: number;
  minibatch: number;
  clipLow: number;
  clipHigh: number;
  dualClip: number | null;
  tokens: ClipToken[];
}

export type Question = NumberQuestion | ClipQuestion;

/** A typed answer is right when |typed − answer| ≤ abs + rel·|answer|: the given numbers are rounded to 4 decimals. */
export const ANSWER_TOLERANCE = { abs: 0.005, rel: 0.005 } as const;

/** How many tokens a clip question lists. */
export const CLIP_TOKENS = 4;

/** The number a student typed: a Unicode minus, spaces and a decimal comma are taken; null when it is not one number. */
export function parseAnswer(typed: string): number | null {
  let s = typed
    .trim()
    .replace(/[\u2212\u2012\u2013]/g, '-')
    .replace(/\s+/g, '');
  if (!s.includes('.') && /^-?\d+,\d+$/.test(s)) s = s.replace(',', '.');
  if (!/^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(s)) return null;
  const x = Number(s);
  return Number.isFinite(x) ? x : null;
}

/** Whether `typed` answers `answer` within ANSWER_TOLERANCE. */
export function isRight(typed: number, answer: number): boolean {
  return Math.abs(typed - answer) <= ANSWER_TOLERANCE.abs + ANSWER_TOLERANCE.rel * Math.abs(answer);
}

/** The number as the question shows it (4 decimals), and as the student computes with it. */
export function shownValue(x: number): number {
  return Math.round(x * 1e4) / 1e4;
}

const actionRows = (trace: IterationTrace) =>
  Array.from({ length: trace.B }, (_, b) => b).filter((b) => trace.actionMask.subarray(b * trace.A, (b + 1) * trace.A).some((m) => m !== 0));

function pick<T>(rng: Rng, xs: readonly T[]): T | undefined {
  return xs.length === 0 ? undefined : xs[rng.int(0, xs.length)];
}

/** The action tokens of a table, in order. */
const actions = (rows: readonly TokenRow[]) => rows.filter((r) => !r.masked);

/**
 * One question of each kind the iteration has, in QUESTION_KINDS order, at positions drawn from
 * `seed` (the same trace and seed give the same questions).
 */
export function questionsFor(trace: IterationTrace, rec: RecomputedTrace, seed: number): Question[] {
  const rng = new Rng(seed);
  const rows = actionRows(trace);
  const out: Question[] = [];
  const k = rec.knobs;
  const at = (b: number, t: number) => b * trace.A + t;
  const table = (b: number) => tokenTable(trace, b, rec);

  // GAE: a token with a successor, so the recursion is part of the answer.
  if (k.advantageEstimator === 'gae' && rec.delta) {
    const candidates = rows.flatMap((b) =>
      actions(table(b).rows)
        .slice(0, -1)
        .map((r) => [b, r.t] as const),
    );
    const c = pick(rng, candidates);
    if (c) {
      const [b, t] = c;
      const next = rec.advantagesRaw[at(b, t + 1)];
      out.push({
        kind: 'gae',
        row: b,
        t,
        step: 'advantages',
        given: [
          { tex: `\\delta_{${t}}`, value: shownValue(rec.delta[at(b, t)]) },
          { tex: '\\gamma', value: k.gamma },
          { tex: '\\lambda', value: k.lam },
          { tex: `A_{${t + 1}}`, value: shownValue(next) },
        ],
        asked: `A_{${t}}`,
        answer: rec.advantagesRaw[at(b, t)],
        source: 'recomputed',
      });
    }
  }

  // −β·KL_t: the trainer's KL with the iteration's β, away from the scored token (no score added there).
  if (k.klInReward && rec.rewardBeta > 0) {
    const candidates = rows.flatMap((b) =>
      actions(table(b).rows)
        .filter((r) => !r.scored)
        .map((r) => [b, r] as const),
    );
    const c = pick(rng, candidates);
    if (c) {
      const [b, r] = c;
      out.push({
        kind: 'kl',
        row: b,
        t: r.t,
        step: 'rewardShaping',
        given: [
          { tex: `\\log\\pi_{\\text{old}}(a_{${r.t}})`, value: shownValue(r.oldLogprob) },
          { tex: `\\log\\pi_{\\text{ref}}(a_{${r.t}})`, value: shownValue(r.refLogprob) },
          { tex: '\\beta', value: shownValue(rec.rewardBeta) },
        ],
        asked: `-\\beta\\,\\mathrm{KL}_{${r.t}}`,
        answer: -rec.rewardBeta * trace.stored.kl[at(b, r.t)],
        source: 'trainer',
      });
    }
  }

  // Whitening: the trainer's whitened advantage from the raw one and the batch's μ and σ.
  if (rec.whitening) {
    const w = rec.whitening;
    const c = pick(
      rng,
      rows.flatMap((b) => actions(table(b).rows).map((r) => [b, r] as const)),
    );
    if (c) {
      const [b, r] = c;
      out.push({
        kind: 'whiten',
        row: b,
        t: r.t,
        step: 'whitening',
        given: [
          { tex: `A_{${r.t}}`, value: shownValue(r.advantageRaw) },
          { tex: '\\mu', value: shownValue(w.mean) },
          { tex: '\\sigma', value: shownValue(Math.sqrt(w.variance)) },
        ],
        asked: `\\hat A_{${r.t}}`,
        answer: trace.stored.advantages[at(b, r.t)],
        source: 'trainer',
      });
    }
  }

  // A group estimator's advantage of one response, where every token of it carries that number.
  const est = k.advantageEstimator;
  if ((est === 'group_norm' || est === 'dr_grpo' || est === 'rloo') && !rec.whitening) {
    const candidates = rows.filter((b) => {
      const tab = table(b);
      if (!tab.group || tab.group.members.length < 2) return false;
      const acts = actions(tab.rows);
      const a0 = trace.stored.advantages[at(b, acts[0].t)];
      // The KL (added per token in OpenRLHF's order) would make the tokens differ: not this question.
      return acts.every((r) => trace.stored.advantages[at(b, r.t)] === a0) && Math.abs(a0 - tab.group.transformedScore) <= 1e-5 * (1 + Math.abs(a0));
    });
    const b = pick(rng, candidates);
    if (b !== undefined) {
      const tab = table(b);
      const g = tab.group!;
      const first = actions(tab.rows)[0].t;
      out.push({
        kind: 'group',
        row: b,
        t: first,
        step: 'advantages',
        given: g.scores.map((s, i) => ({ tex: g.members[i] === b ? `s_{${g.members[i] + 1}}^{\\star}` : `s_{${g.members[i] + 1}}`, value: shownValue(s) })),
        asked: `\\tilde s_{${b + 1}}`,
        answer: trace.stored.advantages[at(b, first)],
        source: 'trainer',
      });
    }
  }

  // The clip: a step where the ratios have moved, its tokens of one response, clipped ones first.
  if (k.lossMode === 'vanilla') {
    const steps: { b: number; update: number; epoch: number; minibatch: number; tokens: ClipToken[] }[] = [];
    for (const b of rows) {
      const tab = table(b);
      const acts = actions(tab.rows);
      const nSteps = acts[0]?.updates.length ?? 0;
      for (let u = 0; u < nSteps; u++) {
        const tokens = acts.map((r) => ({ t: r.t, ratio: r.updates[u].ratio, advantage: r.advantage, side: r.updates[u].clipSide }));
        const cell = acts[0].updates[u];
        if (tokens.some((x) => x.ratio !== 1)) steps.push({ b, update: u, epoch: cell.epoch, minibatch: cell.minibatch, tokens });
      }
    }
    // A step with a clipped token teaches more; any moved step otherwise.
    const withClip = steps.filter((s) => s.tokens.some((x) => x.side !== 'none'));
    const s = pick(rng, withClip.length > 0 ? withClip : steps);
    if (s) {
      // One clipped token when the step has any, then others at random, shown in response order.
      const order = s.tokens.map((_, i) => i);
      for (let i = order.length - 1; i > 0; i--) {
        const j = rng.int(0, i + 1);
        [order[i], order[j]] = [order[j], order[i]];
      }
      const firstClipped = order.find((i) => s.tokens[i].side !== 'none');
      const picked = firstClipped === undefined ? order : [firstClipped, ...order.filter((i) => i !== firstClipped)];
      const chosen = picked.slice(0, CLIP_TOKENS).map((i) => s.tokens[i]);
      chosen.sort((a, b) => a.t - b.t);
      out.push({
        kind: 'clip',
        row: s.b,
        t: chosen[0].t,
        step: 'ratioClip',
        update: s.update,
        epoch: s.epoch,
        minibatch: s.minibatch,
        clipLow: k.clipLow,
        clipHigh: k.clipHigh,
        dualClip: k.dualClip,
        tokens: chosen,
      });
    }
  }
  return out;
}

/** The clip sides a student may choose for a token (dual only when the run has a dual clip). */
export function clipChoices(q: ClipQuestion): ClipSide[] {
  return q.dualClip === null ? ['none', 'high', 'low'] : ['none', 'high', 'low', 'dual'];
}
