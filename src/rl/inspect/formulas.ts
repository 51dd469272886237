// The walk-through of one PPO iteration, step by step: for each step its formula as a LaTeX
// template, the same formula with one response's numbers at a chosen token, and the functions of
// verl and OpenRLHF that do that step. Every user-facing string is in FORMULA_TEXT, for translation.
import type { KlEstimator } from '../../reference/kl.ts';
import { lastActionIndex } from '../../reference/rewards.ts';
import { WHITEN_EPS } from '../../reference/whiten.ts';
import { covKnobs, sapoTemperatures } from '../../reference/policyLoss.ts';
import type { RecomputedTrace } from './recompute.ts';
import { tokenTable, type TokenRow, type TokenTable, type TokenUpdateCell } from './table.ts';
import type { InspectKnobs, IterationTrace } from './trace.ts';
import { visibleToken } from '../../util/visibleToken.ts';

export type FormulaStepId = 'rollout' | 'referenceCritic' | 'rewardShaping' | 'advantages' | 'whitening' | 'ratioClip' | 'valueLoss' | 'optimiserStep';

/** Every string of the walk-through a user reads. */
export const FORMULA_TEXT = {
  steps: {
    rollout: { title: 'Rollout', why: 'The policy samples each response token, and the sampler keeps the log-probability it drew the token with.' },
    referenceCritic: {
      title: 'Reference and critic',
      why: 'One forward pass each scores every sampled token under the actor (π_old), the frozen reference (π_ref) and, for GAE, the critic (V_t).',
    },
    rewardShaping: { title: 'Reward shaping', why: 'A per-token KL penalty keeps the policy near the reference; the task score arrives only at the last action token.' },
    advantages: {
      title: 'Advantages',
      why: 'GAE scans the response from the end, carrying the discounted sum of TD errors; a group estimator compares the response’s score with its group’s.',
    },
    whitening: {
      title: 'Whitening',
      why: 'Advantages are shifted and scaled to mean 0 and variance 1 over every action token of the batch, so the step size does not depend on the reward scale.',
    },
    ratioClip: {
      title: 'Ratio and clip',
      why: 'The ratio π_new/π_old measures how far the update moved the token; clipping stops the gradient once it moved far enough in the advantage’s direction.',
    },
    valueLoss: { title: 'Value loss', why: 'The critic regresses towards the returns, its move held within ±ε of the old value when the clip makes the loss larger.' },
    optimiserStep: {
      title: 'Optimiser step and metrics',
      why: 'Token losses are averaged with the aggregation weights into one loss; its gradient drives one AdamW step, and the clip fraction counts the clipped tokens.',
    },
  },
  notes: {
    masked: 'padding after EOS: not an action token',
    notKept: 'not kept by this rollout',
    noUpdate: 'this token was in no update step',
    noCritic: 'no critic with a group estimator',
    whiteningOff: 'whitening off',
    tokenId: 'token id',
    valueClipped: 'value clipped to V_old ± ε_v',
    clip: { low: 'clipped below (1 − ε_low)', high: 'clipped above (1 + ε_high)', dual: 'dual clip (−c·A)', none: 'not clipped' },
  },
} as const;

/** A number as LaTeX: 4 significant digits, powers of ten spelled out, −0 as 0. */
export function texNumber(x: number): string {
  if (!Number.isFinite(x)) return x > 0 ? '\\infty' : x < 0 ? '-\\infty' : '\\text{NaN}';
  if (x === 0) return '0';
  const ax = Math.abs(x);
  if (ax >= 1e-3 && ax < 1e5) return String(Number(x.toPrecision(4)));
  const [m, e] = x.toExponential(3).split('e');
  return `${Number(m)}\\times10^{${Number(e)}}`;
}

/** texNumber in parentheses when negative, for use as a factor or after a minus sign. */
export function texFactor(x: number): string {
  const s = texNumber(x);
  return x < 0 ? `\\left(${s}\\right)` : s;
}

/** Plain words inside LaTeX, its special characters escaped (notes hold names such as ε_low). */
const text = (s: string) => `\\text{${s.replace(/[_%&#$]/g, (c) => `\\${c}`)}}`;

const TEXT_MODE_ESCAPES: Record<string, string> = {
  '\\': '\\textbackslash{}',
  '{': '\\{',
  '}': '\\}',
  _: '\\_',
  '%': '\\%',
  '&': '\\&',
  '#': '\\#',
  $: '\\$',
  '^': '\\textasciicircum{}',
  '~': '\\textasciitilde{}',
};

/** A sampled token's text as LaTeX, in a typewriter face and quotes; whitespace made visible (a space ␣), an empty one ∅. */
export function texToken(s: string): string {
  const shown = s === '' ? '∅' : visibleToken(s);
  return `\\texttt{“${shown.replace(/[\\{}_%&#$^~]/g, (c) => TEXT_MODE_ESCAPES[c])}”}`;
}

/** KL_t as a function of d = log π_old − log π_ref, per estimator. */
export const KL_TEX: Record<KlEstimator, string> = {
  k1: 'd',
  abs: '|d|',
  k2: '\\tfrac12 d^2',
  k3: 'e^{-d} + d - 1',
  'k1+': 'd',
  'k3+': 'e^{-d} + d - 1',
  k1_clamped: '\\max(d, 0)',
};

/** A group estimator's transformed score s̃ from the score s and its group (mean μ, std σ, n members). */
const GROUP_TEX: Record<string, string> = {
  reinforce: '\\tilde s = s',
  reinforce_baseline: '\\tilde s = s - \\mu_g',
  group_norm: '\\tilde s = \\frac{s - \\mu_g}{\\sigma_g + 10^{-9}}',
  rloo: '\\tilde s = s - \\frac{n\\mu_g - s}{n - 1}',
  dr_grpo: '\\tilde s = s - \\mu_g',
  opo: '\\tilde s = s - \\frac{\\sum_{j\\in g} \\ell_j s_j}{\\sum_{j\\in g} \\ell_j}',
  grpo_passk: '\\tilde s = [s = s_{(1)}]\\,\\frac{s_{(1)} - s_{(2)}}{\\sigma_g + 10^{-6}}',
  remax: '\\tilde s = s,\\quad A_t = G_t - b_{\\text{greedy}}',
};

/** Where to evaluate a step: batch row, response position, and which update step of the token. */
export interface FormulaContext {
  trace: IterationTrace;
  rec: RecomputedTrace;
  row: number;
  t: number;
  /** Index into the token's update steps (its epochs/minibatches); default the first. */
  update?: number;
  /** Each response token as text (B·A), as the worker decoded it; without it a_t is shown by its id alone. */
  tokenText?: readonly string[];
}

interface Resolved {
  k: InspectKnobs;
  table: TokenTable;
  tok: TokenRow;
  cell: TokenUpdateCell | null;
  ctx: FormulaContext;
}

export interface FormulaStep {
  id: FormulaStepId;
  title: string;
  why: string;
  /** The formula in symbols, under the knobs the recomputation used. */
  template: (k: InspectKnobs) => string;
  /** The formula with the response's numbers at the context's token. */
  substitute: (ctx: FormulaContext) => string;
  /** Functions doing this step in verl (verl/trainer/ppo/core_algos.py and its workers). */
  verl: readonly string[];
  /** Functions or classes doing this step in OpenRLHF (openrlhf/models, openrlhf/trainer/ppo_utils). */
  openrlhf: readonly string[];
  /** Where the step has one function per mode: the one the knobs pick, in `verl` / `openrlhf`. */
  used?: (k: InspectKnobs) => { verl?: string; openrlhf?: string };
}

function resolve(ctx: FormulaContext): Resolved {
  const table = tokenTable(ctx.trace, ctx.row, ctx.rec);
  const tok = table.rows[ctx.t];
  if (!tok) throw new Error(`formula: position ${ctx.t} outside the response (length ${table.rows.length})`);
  return { k: ctx.rec.knobs, table, tok, cell: tok.updates[ctx.update ?? 0] ?? null, ctx };
}

const policyTemplate = (k: InspectKnobs): string => {
  const ratio = '\\rho_t = \\exp(\\log\\pi_\\theta(a_t\\mid s_t) - \\log\\pi_{\\text{old}}(a_t\\mid s_t))';
  if (k.lossMode === 'cispo')
    return `${ratio},\\; L_t = -\\operatorname{sg}(\\operatorname{clip}(\\rho_t, 1-\\epsilon_{\\text{low}}, 1+\\epsilon_{\\text{high}}))\\,\\hat A_t \\log\\pi_\\theta(a_t\\mid s_t)`;
  if (k.lossMode === 'gpg') return 'L_t = -\\hat A_t \\log\\pi_\\theta(a_t\\mid s_t)';
  // Clip-Cov / KL-Cov: S = the tokens chosen by the covariance (A_t − Ā)(log π_t − mean log π) over the minibatch
  if (k.lossMode === 'kl_cov') return `${ratio},\\; L_t = -\\hat A_t\\rho_t + \\kappa\\,\\mathbb{1}[t \\in S]\\,\\lvert\\log\\rho_t\\rvert`;
  if (k.lossMode === 'clip_cov')
    return `${ratio},\\; L_t = \\big(1 - \\mathbb{1}[t \\in S]\\big)\\max\\big(-\\hat A_t\\rho_t,\\, -\\hat A_t \\operatorname{clip}(\\rho_t, 1-\\epsilon_{\\text{low}}, 1+\\epsilon_{\\text{high}})\\big)`;
  if (k.lossMode === 'sapo')
    return `${ratio},\\; L_t = -\\hat A_t\\,\\tfrac{4}{\\tau_t}\\,\\sigma\\big(\\tau_t(\\rho_t - 1)\\big),\\ \\tau_t = \\tau_{\\text{pos}}\\ (\\hat A_t > 0),\\ \\tau_{\\text{neg}}\\ (\\hat A_t \\le 0)`;
  if (k.lossMode === 'geo_mean')
    return (
      'd_t = \\log\\pi_\\theta - \\log\\pi_{\\text{old}},\\; \\ell_t = \\operatorname{sgn}(\\hat A_t)\\min\\big(\\operatorname{sgn}(\\hat A_t)\\,d_t,\\, \\operatorname{sgn}(\\hat A_t)\\operatorname{clip}(d_t, -\\epsilon_{\\text{low}}, \\epsilon_{\\text{high}})\\big),\\; ' +
      'L = -\\bar A\\,\\exp\\big(\\tfrac1{|y|}\\textstyle\\sum_t \\ell_t\\big)'
    );
  const r = k.lossMode === 'gspo' ? '\\rho = \\exp\\big(\\tfrac1{|y|}\\textstyle\\sum_t (\\log\\pi_\\theta - \\log\\pi_{\\text{old}})\\big)' : ratio;
  const clipped = `\\max\\big(-\\hat A_t\\rho_t,\\, -\\hat A_t \\operatorname{clip}(\\rho_t, 1-\\epsilon_{\\text{low}}, 1+\\epsilon_{\\text{high}})\\big)`;
  if (k.lossMode === 'vanilla' && k.dualClip !== null) return `${r},\\; L_t = \\min\\big(${clipped},\\, -c\\,\\hat A_t\\big)\\ (\\hat A_t < 0)`;
  return `${r},\\; L_t = ${clipped}`;
};

/** A group estimator's s̃ with the numbers in (GROUP_TEX in symbols). */
function groupScoreTex(estimator: string, score: number, mean: number, std: number, n: number, transformed: number): string {
  switch (estimator) {
    case 'reinforce':
      return texNumber(score);
    case 'group_norm':
      return `\\frac{${texNumber(score)} - ${texFactor(mean)}}{${texNumber(std)} + 10^{-9}}`;
    case 'rloo':
      return `${texNumber(score)} - \\frac{${n}\\cdot${texFactor(mean)} - ${texFactor(score)}}{${n - 1}}`;
    case 'remax':
      return texNumber(score);
    case 'opo':
      // The length-weighted baseline, read off s − s̃.
      return `${texNumber(score)} - ${texFactor(score - transformed)}`;
    case 'grpo_passk':
      return transformed === 0 ? '0' : `\\frac{${texNumber(transformed * (std + 1e-6))}}{${texNumber(std)} + 10^{-6}}`;
    default:
      return `${texNumber(score)} - ${texFactor(mean)}`;
  }
}

/** verl's function for each advantage estimator (core_algos.py; Dr. GRPO is GRPO without the std, norm_adv_by_std_in_grpo false). */
const VERL_ADVANTAGE_FN: Record<InspectKnobs['advantageEstimator'], string> = {
  gae: 'compute_gae_advantage_return',
  reinforce: 'compute_reinforce_plus_plus_outcome_advantage',
  reinforce_baseline: 'compute_reinforce_plus_plus_baseline_outcome_advantage',
  group_norm: 'compute_grpo_outcome_advantage',
  dr_grpo: 'compute_grpo_outcome_advantage',
  rloo: 'compute_rloo_outcome_advantage',
  opo: 'compute_opo_outcome_advantage',
  grpo_passk: 'compute_grpo_passk_outcome_advantage',
  remax: 'compute_remax_outcome_advantage',
};

/**
 * A step's functions with the one this run used first and flagged, the others after it in their
 * own order; a step with one function for every mode has none flagged.
 */
export function stepFunctions(step: FormulaStep, k: InspectKnobs, framework: 'verl' | 'openrlhf'): { name: string; used: boolean }[] {
  const names = step[framework];
  const used = step.used?.(k)[framework];
  if (!used || !names.includes(used)) return names.map((name) => ({ name, used: false }));
  return [{ name: used, used: true }, ...names.filter((n) => n !== used).map((name) => ({ name, used: false }))];
}

const gaeTemplate = '\\delta_t = r_t + \\gamma V_{t+1} - V_t,\\quad A_t = \\delta_t + \\gamma\\lambda A_{t+1},\\quad R_t = A_t + V_t';

function substituteAdvantages({ k, table, tok, ctx }: Resolved): string {
  const { rec, row, t } = ctx;
  const A = ctx.trace.A;
  const carried = t + 1 < A ? rec.advantagesRaw[row * A + t + 1] : 0;
  if (tok.masked) return `A_{${t}} = A_{${t + 1}} = ${texNumber(tok.advantageRaw)}\\quad ${text(FORMULA_TEXT.notes.masked)}`;
  if (k.advantageEstimator === 'gae') {
    let nextValue = 0;
    for (let u = t + 1; u < A; u++) {
      if (ctx.trace.actionMask[row * A + u] !== 0) {
        nextValue = ctx.trace.values[row * A + u];
        break;
      }
    }
    return (
      `\\delta_{${t}} = ${texNumber(tok.reward)} + ${texNumber(k.gamma)}\\cdot${texFactor(nextValue)} - ${texFactor(tok.value!)} = ${texNumber(tok.delta!)},\\quad ` +
      `A_{${t}} = ${texNumber(tok.delta!)} + ${texNumber(k.gamma * k.lam)}\\cdot${texFactor(carried)} = ${texNumber(tok.advantageRaw)},\\quad ` +
      `R_{${t}} = ${texNumber(tok.return)}`
    );
  }
  const g = table.group!;
  return (
    `\\mu_g = ${texNumber(g.mean)},\\ \\sigma_g = ${texNumber(g.std)},\\ n = ${g.members.length},\\quad ` +
    `\\tilde s = ${groupScoreTex(k.advantageEstimator, table.score, g.mean, g.std, g.members.length, g.transformedScore)} = ${texNumber(g.transformedScore)},\\quad ` +
    (k.advantageEstimator === 'remax'
      ? `G_{${t}} = ${texNumber(rec.scanRewards[row * A + t])} + ${texFactor(t + 1 < A ? rec.returns[row * A + t + 1] : 0)} = ${texNumber(tok.return)},\\quad A_{${t}} = ${texNumber(tok.return)} - ${texFactor(tok.return - tok.advantageRaw)} = ${texNumber(tok.advantageRaw)}`
      : `G_{${t}} = ${texNumber(rec.scanRewards[row * A + t])} + ${texNumber(k.gamma)}\\cdot${texFactor(carried)} = ${texNumber(tok.advantageRaw)}`)
  );
}

function substituteRatio({ k, tok, cell }: Resolved, t: number): string {
  if (tok.masked) return text(FORMULA_TEXT.notes.masked);
  if (!cell) return text(FORMULA_TEXT.notes.noUpdate);
  const a = tok.advantage;
  const head =
    k.lossMode === 'gspo' ? `\\rho = ${texNumber(cell.ratio)}` : `\\rho_{${t}} = \\exp(${texNumber(cell.newLogprob)} - ${texFactor(tok.oldLogprob)}) = ${texNumber(cell.ratio)}`;
  const clip = `\\operatorname{clip}(${texNumber(cell.ratio)}, ${texNumber(1 - k.clipLow)}, ${texNumber(1 + k.clipHigh)})`;
  const side = text(FORMULA_TEXT.notes.clip[cell.clipSide]);
  if (k.lossMode === 'cispo') return `${head},\\quad L_{${t}} = -${clip}\\cdot${texFactor(a)}\\cdot${texFactor(cell.newLogprob)} = ${texNumber(cell.tokenLoss)}\\quad ${side}`;
  if (k.lossMode === 'gpg') return `L_{${t}} = -${texFactor(a)}\\cdot${texFactor(cell.newLogprob)} = ${texNumber(cell.tokenLoss)}`;
  const inS = cell.covPicked ? 1 : 0;
  if (k.lossMode === 'kl_cov') {
    const { ppoKlCoef } = covKnobs(k);
    return `${head},\\quad L_{${t}} = -${texFactor(a)}\\cdot${texNumber(cell.ratio)} + ${texNumber(ppoKlCoef)}\\cdot ${inS}\\cdot\\lvert\\log ${texNumber(cell.ratio)}\\rvert = ${texNumber(cell.tokenLoss)}`;
  }
  if (k.lossMode === 'clip_cov') {
    const clipped = `\\max\\big(-${texFactor(a)}\\cdot${texNumber(cell.ratio)},\\, -${texFactor(a)}\\cdot${clip}\\big)`;
    return `${head},\\quad L_{${t}} = (1 - ${inS})\\cdot${clipped} = ${texNumber(cell.tokenLoss)}`;
  }
  if (k.lossMode === 'sapo') {
    const { sapoTauPos, sapoTauNeg } = sapoTemperatures(k);
    const tau = texNumber(a > 0 ? sapoTauPos : sapoTauNeg);
    return `${head},\\quad L_{${t}} = -${texFactor(a)}\\cdot\\tfrac{4}{${tau}}\\,\\sigma\\big(${tau}\\,(${texNumber(cell.ratio)} - 1)\\big) = ${texNumber(cell.tokenLoss)}`;
  }
  if (k.lossMode === 'geo_mean') return `${head},\\quad L = ${texNumber(cell.tokenLoss)}\\quad ${side}`;
  const inner = `\\max\\big(-${texFactor(a)}\\cdot${texNumber(cell.ratio)},\\, -${texFactor(a)}\\cdot${clip}\\big)`;
  const loss = k.lossMode === 'vanilla' && k.dualClip !== null && a < 0 ? `\\min\\big(${inner},\\, -${texNumber(k.dualClip)}\\cdot${texFactor(a)}\\big)` : inner;
  return `${head},\\quad L_{${t}} = ${loss} = ${texNumber(cell.tokenLoss)}\\quad ${side}`;
}

/** The walk-through's steps, in order. */
export const FORMULA_STEPS: readonly FormulaStep[] = [
  {
    id: 'rollout',
    ...FORMULA_TEXT.steps.rollout,
    template: () => 'a_t \\sim \\pi_{\\text{rollout}}(\\cdot\\mid s_t),\\quad \\log\\pi_{\\text{rollout}}(a_t\\mid s_t)',
    substitute: (ctx) => {
      const { tok } = resolve(ctx);
      const lp = tok.rolloutLogprob === null ? text(FORMULA_TEXT.notes.notKept) : texNumber(tok.rolloutLogprob);
      const words = ctx.tokenText?.[ctx.row * ctx.trace.A + ctx.t];
      const a = words === undefined ? String(tok.token) : `${texToken(words)}\\ (${text(FORMULA_TEXT.notes.tokenId)}\\ ${tok.token})`;
      return `a_{${ctx.t}} = ${a},\\quad \\log\\pi_{\\text{rollout}}(a_{${ctx.t}}\\mid s_{${ctx.t}}) = ${lp}${tok.masked ? `\\quad ${text(FORMULA_TEXT.notes.masked)}` : ''}`;
    },
    verl: ['generate_sequences'],
    openrlhf: ['generate_samples'],
  },
  {
    id: 'referenceCritic',
    ...FORMULA_TEXT.steps.referenceCritic,
    template: (k) => `\\log\\pi_{\\text{old}}(a_t\\mid s_t),\\quad \\log\\pi_{\\text{ref}}(a_t\\mid s_t)${k.advantageEstimator === 'gae' ? ',\\quad V_t = V_\\phi(s_t)' : ''}`,
    substitute: (ctx) => {
      const { tok } = resolve(ctx);
      const t = ctx.t;
      const v = tok.value === null ? text(FORMULA_TEXT.notes.noCritic) : `V_{${t}} = ${texNumber(tok.value)}`;
      return `\\log\\pi_{\\text{old}}(a_{${t}}\\mid s_{${t}}) = ${texNumber(tok.oldLogprob)},\\quad \\log\\pi_{\\text{ref}}(a_{${t}}\\mid s_{${t}}) = ${texNumber(tok.refLogprob)},\\quad ${v}`;
    },
    verl: ['compute_log_prob', 'compute_ref_log_prob', 'compute_values', 'logprobs_from_logits'],
    openrlhf: ['make_experience', 'log_probs_from_logits'],
  },
  {
    id: 'rewardShaping',
    ...FORMULA_TEXT.steps.rewardShaping,
    template: (k) => `d_t = \\log\\pi_{\\text{old}} - \\log\\pi_{\\text{ref}},\\quad \\mathrm{KL}_t = ${KL_TEX[k.klEstimator]},\\quad r_t = -\\beta\\,\\mathrm{KL}_t + [t = T]\\,s`,
    substitute: (ctx) => {
      const { k, tok, table } = resolve(ctx);
      const t = ctx.t;
      if (tok.masked) return `\\mathrm{KL}_{${t}} = 0,\\ r_{${t}} = 0\\quad ${text(FORMULA_TEXT.notes.masked)}`;
      const d = tok.oldLogprob - tok.refLogprob;
      const score = tok.scored ? ` + ${texFactor(table.score)}` : '';
      return (
        `d_{${t}} = ${texNumber(tok.oldLogprob)} - ${texFactor(tok.refLogprob)} = ${texNumber(d)},\\quad ` +
        `\\mathrm{KL}_{${t}} = ${texNumber(tok.kl)}\\ (${text(k.klEstimator)}),\\quad ` +
        `r_{${t}} = -${texFactor(ctx.rec.rewardBeta)}\\cdot${texFactor(tok.kl)}${score} = ${texNumber(tok.reward)}`
      );
    },
    verl: ['apply_kl_penalty', 'kl_penalty'],
    openrlhf: ['compute_approx_kl', 'compute_reward'],
  },
  {
    id: 'advantages',
    ...FORMULA_TEXT.steps.advantages,
    template: (k) => (k.advantageEstimator === 'gae' ? gaeTemplate : `${GROUP_TEX[k.advantageEstimator]},\\quad G_t = \\tilde r_t + \\gamma G_{t+1}`),
    substitute: (ctx) => substituteAdvantages(resolve(ctx)),
    verl: [
      'compute_gae_advantage_return',
      'compute_grpo_outcome_advantage',
      'compute_rloo_outcome_advantage',
      'compute_reinforce_plus_plus_outcome_advantage',
      'compute_reinforce_plus_plus_baseline_outcome_advantage',
      'compute_opo_outcome_advantage',
      'compute_grpo_passk_outcome_advantage',
      'compute_remax_outcome_advantage',
    ],
    openrlhf: ['compute_advantages_and_returns', 'get_advantages_and_returns', 'get_cumulative_returns'],
    used: (k) => ({ verl: VERL_ADVANTAGE_FN[k.advantageEstimator], openrlhf: k.advantageEstimator === 'gae' ? 'get_advantages_and_returns' : 'get_cumulative_returns' }),
  },
  {
    id: 'whitening',
    ...FORMULA_TEXT.steps.whitening,
    template: () => `\\hat A_t = \\frac{A_t - \\mu}{\\sqrt{\\sigma^2 + ${texNumber(WHITEN_EPS)}}}`,
    substitute: (ctx) => {
      const { tok } = resolve(ctx);
      const w = ctx.rec.whitening;
      if (!w) return `\\hat A_{${ctx.t}} = A_{${ctx.t}} = ${texNumber(tok.advantage)}\\quad ${text(FORMULA_TEXT.notes.whiteningOff)}`;
      const sigma = Math.sqrt(w.variance);
      return (
        `\\mu = ${texNumber(w.mean)},\\ \\sigma = ${texNumber(sigma)}\\ (n = ${w.n}),\\quad ` +
        `\\hat A_{${ctx.t}} = \\frac{${texNumber(tok.advantageRaw)} - ${texFactor(w.mean)}}{\\sqrt{${texFactor(sigma)}^2 + ${texNumber(WHITEN_EPS)}}} = ${texNumber(tok.advantage)}`
      );
    },
    verl: ['masked_whiten'],
    openrlhf: ['compute_advantages_and_returns'],
  },
  {
    id: 'ratioClip',
    ...FORMULA_TEXT.steps.ratioClip,
    template: policyTemplate,
    substitute: (ctx) => substituteRatio(resolve(ctx), ctx.t),
    verl: [
      'compute_policy_loss_vanilla',
      'compute_policy_loss_gspo',
      'compute_policy_loss_cispo',
      'compute_policy_loss_sapo',
      'compute_policy_loss_gpg',
      'compute_policy_loss_geo_mean',
      'compute_policy_loss_clip_cov',
      'compute_policy_loss_kl_cov',
    ],
    openrlhf: ['PolicyLoss'],
    used: (k) => ({ verl: `compute_policy_loss_${k.lossMode}`, openrlhf: 'PolicyLoss' }),
  },
  {
    id: 'valueLoss',
    ...FORMULA_TEXT.steps.valueLoss,
    template: () => 'L^V_t = \\tfrac12\\max\\big((V_t - R_t)^2,\\, (\\operatorname{clip}(V_t, V^{\\text{old}}_t - \\epsilon_v, V^{\\text{old}}_t + \\epsilon_v) - R_t)^2\\big)',
    substitute: (ctx) => {
      const { tok, cell } = resolve(ctx);
      if (tok.masked) return text(FORMULA_TEXT.notes.masked);
      if (!cell) return text(FORMULA_TEXT.notes.noUpdate);
      if (!cell.value) return text(FORMULA_TEXT.notes.noCritic);
      const v = cell.value;
      return (
        `L^V_{${ctx.t}} = \\tfrac12\\max\\big((${texNumber(v.newValue)} - ${texFactor(tok.return)})^2,\\, \\ldots\\big) = \\max(${texNumber(v.unclipped)}, ${texNumber(v.clippedTerm)}) = ${texNumber(v.loss)}` +
        (v.clipped ? `\\quad ${text(FORMULA_TEXT.notes.valueClipped)}` : '')
      );
    },
    verl: ['compute_value_loss'],
    openrlhf: ['ValueLoss'],
  },
  {
    id: 'optimiserStep',
    ...FORMULA_TEXT.steps.optimiserStep,
    template: (k) =>
      `\\mathcal L = \\textstyle\\sum_t w_t L_t${k.useKlLoss ? ' + \\beta_{\\text{KL}}\\sum_t w_t \\mathrm{KL}_t' : ''},\\quad g_t = \\partial\\mathcal L/\\partial\\log\\pi_\\theta(a_t\\mid s_t)`,
    substitute: (ctx) => {
      const { tok, cell } = resolve(ctx);
      if (tok.masked) return `w_{${ctx.t}} = 0\\quad ${text(FORMULA_TEXT.notes.masked)}`;
      if (!cell) return text(FORMULA_TEXT.notes.noUpdate);
      const step = ctx.rec.minibatches.find((m) => m.epoch === cell.epoch && m.index === cell.minibatch)!;
      return (
        `w_{${ctx.t}} = ${texNumber(cell.aggWeight)},\\quad w_{${ctx.t}} L_{${ctx.t}} = ${texNumber(cell.aggWeight * cell.tokenLoss)},\\quad g_{${ctx.t}} = ${texNumber(cell.gradWeight)},\\quad ` +
        `\\mathcal L = ${texNumber(step.stats.policyLoss)},\\quad \\text{clipfrac} = ${texNumber(step.stats.clipFraction)}`
      );
    },
    verl: ['agg_loss', 'compute_data_metrics'],
    openrlhf: ['masked_mean'],
  },
];

/** The step with this id. */
export function formulaStep(id: FormulaStepId): FormulaStep {
  return FORMULA_STEPS.find((s) => s.id === id)!;
}

/** The last action token of a row, the natural default position of a walk-through (−1 for none). */
export function defaultToken(trace: IterationTrace, row: number): number {
  return lastActionIndex(trace.actionMask, row, trace.A);
}
