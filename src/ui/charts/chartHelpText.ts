// What each chart means, for the "?" beside its title: the formula, what a healthy and a sick
// curve look like, and the name the same number has in verl's and OpenRLHF's logs, so a student
// can hold this page's chart beside a real run's TensorBoard or wandb panel. The formulas and the
// engines' metric names are identifiers and live here; the prose is in the `charts` namespace
// (help.metrics.<key>), read at each access so a language switch shows at the next render.
import { t } from '../../i18n/index.ts';

/** The metric's name in one engine's logs, or null where that engine logs no counterpart (`note` says why). */
export interface EngineMetric {
  name: string | null;
  note?: string;
}

export interface ChartHelp {
  /** LaTeX, typeset by <Formula>. */
  formula: string;
  /** One sentence: what the number is. */
  what: string;
  healthy: string;
  sick: string;
  verl: EngineMetric;
  openrlhf: EngineMetric;
}

/**
 * What a chart's help adds when every run drawn is of your own model, where the panel fixes a
 * setting the playground lets the visitor choose (help.ownModel.<key>); undefined elsewhere.
 */
export function ownModelHelpNote(metric: string): string | undefined {
  return OWN_MODEL_NOTES.includes(metric) ? t(`charts:help.ownModel.${metric}`, HELP_SYMBOLS) : undefined;
}
const OWN_MODEL_NOTES: readonly string[] = ['kl'];

/** The held-out chart is not a trainer metric; it has this key. */
export const HELD_OUT_KEY = 'heldout';

/** The teaching views' charts (ViewHelp), which show no single metric, have these keys. */
export const TEACH_VIEW_KEYS = ['clipping', 'kl_shaping'] as const;
export type TeachViewKey = (typeof TEACH_VIEW_KEYS)[number];

type Engine = 'verl' | 'openrlhf';

/**
 * Symbols and metric names the help prose writes in Latin letters: variables of the locale
 * strings, so a translation keeps them as they are (π_old, ε_low) rather than holding English words.
 */
export const HELP_SYMBOLS = { piOld: 'π_old', epsLow: 'ε_low', epsHigh: 'ε_high', rewardsAfterKl: 'critic/rewards/mean' } as const;

/** An engine's metric name; `note: true` where the locale files hold a note on it (help.metrics.<key>.<engine>Note). */
interface EngineName {
  name: string | null;
  note?: true;
}

function engine(key: string, which: Engine, e: EngineName): EngineMetric {
  if (!e.note) return { name: e.name };
  return {
    name: e.name,
    get note() {
      return t(`charts:help.metrics.${key}.${which}Note`, HELP_SYMBOLS);
    },
  };
}

/** A chart's help whose prose is looked up in the current language whenever it is read. */
function entry(key: string, formula: string, verl: EngineName, openrlhf: EngineName): ChartHelp {
  return {
    formula,
    get what() {
      return t(`charts:help.metrics.${key}.what`, HELP_SYMBOLS);
    },
    get healthy() {
      return t(`charts:help.metrics.${key}.healthy`, HELP_SYMBOLS);
    },
    get sick() {
      return t(`charts:help.metrics.${key}.sick`, HELP_SYMBOLS);
    },
    verl: engine(key, 'verl', verl),
    openrlhf: engine(key, 'openrlhf', openrlhf),
  };
}

export const CHART_HELP: Readonly<Record<string, ChartHelp>> = {
  reward_mean: entry('reward_mean', '\\bar{s} = \\frac{1}{B}\\sum_{b=1}^{B} s_b', { name: 'critic/score/mean', note: true }, { name: 'reward' }),
  [HELD_OUT_KEY]: entry(
    'heldout',
    '\\mathrm{acc} = \\frac{1}{N}\\sum_{i=1}^{N} \\mathbf{1}[\\,y_i \\text{ correct}\\,]',
    { name: 'val-core/<data_source>/reward/mean@1', note: true },
    { name: 'eval_<dataset>_pass1', note: true },
  ),
  policy_loss: entry(
    'policy_loss',
    'L^{\\mathrm{clip}} = -\\frac{1}{|\\mathcal{T}|}\\sum_{t} \\min\\left(\\rho_t A_t,\\ \\operatorname{clip}(\\rho_t, 1-\\varepsilon_{\\mathrm{low}}, 1+\\varepsilon_{\\mathrm{high}})\\, A_t\\right),\\quad \\rho_t = \\frac{\\pi_\\theta(a_t)}{\\pi_{\\mathrm{old}}(a_t)}',
    { name: 'actor/pg_loss' },
    { name: 'policy_loss' },
  ),
  value_loss: entry(
    'value_loss',
    'L^{V} = \\frac{1}{2}\\,\\max\\left((V_t - R_t)^2,\\ (\\operatorname{clip}(V_t, V^{\\mathrm{old}}_t \\pm \\varepsilon_v) - R_t)^2\\right)',
    { name: 'critic/vf_loss' },
    { name: 'critic_loss' },
  ),
  clipfrac: entry(
    'clipfrac',
    '\\frac{1}{|\\mathcal{T}|}\\sum_t \\mathbf{1}\\left[\\rho_t A_t > \\operatorname{clip}(\\rho_t, 1-\\varepsilon_{\\mathrm{low}}, 1+\\varepsilon_{\\mathrm{high}}) A_t\\right]',
    { name: 'actor/pg_clipfrac', note: true },
    { name: 'ppo_clip_ratio' },
  ),
  kl: entry(
    'kl',
    '\\mathrm{KL} = \\frac{\\sum_{b,t} m_{b,t}\\, k(\\log\\pi_\\theta - \\log\\pi_{\\mathrm{ref}})}{\\sum_{b,t} m_{b,t}}',
    { name: 'actor/reward_kl_penalty', note: true },
    { name: 'kl' },
  ),
  kl_token_mean: entry(
    'kl_token_mean',
    '\\overline{\\mathrm{KL}} = \\frac{1}{B}\\sum_b \\frac{\\sum_t m_{b,t}\\, k_{b,t}}{\\sum_t m_{b,t}}',
    { name: 'actor/reward_kl_penalty', note: true },
    { name: null, note: true },
  ),
  beta: entry('beta', 'r_t = -\\beta\\, k_t + \\mathbf{1}[t = T]\\, s', { name: 'actor/reward_kl_penalty_coeff' }, { name: null, note: true }),
  kl_loss_coef: entry(
    'kl_loss_coef',
    'L = L^{\\mathrm{clip}} + c_{\\mathrm{KL}}\\cdot \\frac{1}{|\\mathcal{T}|}\\sum_t k(\\log\\pi_\\theta - \\log\\pi_{\\mathrm{ref}})',
    { name: 'actor/kl_coef' },
    { name: null, note: true },
  ),
  kl_loss: entry(
    'kl_loss',
    'L^{\\mathrm{KL}} = \\frac{1}{|\\mathcal{T}|}\\sum_t k(\\log\\pi_\\theta - \\log\\pi_{\\mathrm{ref}})',
    { name: 'actor/kl_loss' },
    { name: 'kl', note: true },
  ),
  approx_kl: entry(
    'approx_kl',
    '\\widehat{\\mathrm{KL}}(\\pi_{\\mathrm{old}}\\Vert\\pi_\\theta) = \\frac{1}{|\\mathcal{T}|}\\sum_t \\left(\\log\\pi_{\\mathrm{old}}(a_t) - \\log\\pi_\\theta(a_t)\\right)',
    { name: 'actor/ppo_kl' },
    { name: 'ppo_kl' },
  ),
  entropy: entry(
    'entropy',
    'H = -\\frac{1}{|\\mathcal{T}|}\\sum_t \\sum_{v} \\pi_\\theta(v \\mid x_{<t}) \\log \\pi_\\theta(v \\mid x_{<t})',
    { name: 'actor/entropy' },
    { name: 'entropy_loss', note: true },
  ),
  explained_variance: entry(
    'explained_variance',
    '\\mathrm{EV} = 1 - \\frac{\\operatorname{Var}[R - V]}{\\operatorname{Var}[R]}',
    { name: 'critic/vf_explained_var' },
    { name: null, note: true },
  ),
  response_length_mean: entry(
    'response_length_mean',
    '\\bar{\\ell} = \\frac{1}{B}\\sum_b \\sum_t m_{b,t}',
    { name: 'response_length/mean', note: true },
    { name: 'response_length' },
  ),
  rollout_old_kl: entry(
    'rollout_old_kl',
    '\\frac{1}{|\\mathcal{T}|}\\sum_t \\left(\\log\\pi_{\\mathrm{rollout}}(a_t) - \\log\\pi_{\\mathrm{old}}(a_t)\\right)',
    { name: 'training/rollout_probs_diff_mean', note: true },
    { name: 'vllm_kl' },
  ),
  clipping: entry(
    'clipping',
    'L_t = \\max\\left(-A_t\\,\\rho_t,\\ -A_t\\operatorname{clip}(\\rho_t, 1-\\varepsilon_{\\mathrm{low}}, 1+\\varepsilon_{\\mathrm{high}})\\right),\\quad A_t < 0:\\ \\min(L_t,\\, -c\\,A_t),\\quad \\rho_t = \\frac{\\pi_\\theta(a_t)}{\\pi_{\\mathrm{old}}(a_t)}',
    { name: 'actor/pg_clipfrac', note: true },
    { name: 'ppo_clip_ratio', note: true },
  ),
  kl_shaping: entry(
    'kl_shaping',
    'r_t = -\\beta\\,\\mathrm{KL}_t + [\\,t = T\\,]\\, s,\\quad \\mathrm{KL}_t = \\log\\pi_{\\mathrm{old}}(a_t) - \\log\\pi_{\\mathrm{ref}}(a_t)\\ \\text{(k1)}',
    { name: 'actor/reward_kl_penalty', note: true },
    { name: 'kl', note: true },
  ),
  filtered_groups: entry(
    'filtered_groups',
    '\\#\\{g : \\operatorname{std}(s_{g,1..n}) = 0\\}',
    { name: 'training/filter_groups/evicted_samples', note: true },
    { name: null, note: true },
  ),
  rollout_corr_rollout_rs_masked_fraction: entry(
    'rollout_corr_rollout_rs_masked_fraction',
    '\\frac{1}{|\\mathcal{T}|}\\sum_t [\\text{token } t \\text{ rejected}]',
    { name: 'rollout_corr/rollout_rs_masked_fraction' },
    { name: null, note: true },
  ),
};

/** The labels of the help popover itself, in the current language. */
export const HELP_UI = {
  open: (title: string) => t('charts:help.open', { title }),
  formula: (title: string) => t('charts:help.formulaLabel', { title }),
  get close() {
    return t('charts:help.close');
  },
  get healthy() {
    return t('charts:help.healthy');
  },
  get sick() {
    return t('charts:help.sick');
  },
  get engines() {
    return t('charts:help.engines');
  },
  // Proper names: the same in every language.
  verl: 'verl',
  openrlhf: 'OpenRLHF',
  get noCounterpart() {
    return t('charts:help.noCounterpart');
  },
};

/**
 * The name a chart's number has in the engines' logs, shown beside its title so a student can match
 * it to a verl (else OpenRLHF) log: null where neither logs it or the name is a pattern.
 */
export function logName(metric: string): { engine: Engine; name: string } | null {
  const help = Object.hasOwn(CHART_HELP, metric) ? CHART_HELP[metric] : undefined;
  if (!help) return null;
  for (const engine of ['verl', 'openrlhf'] as const) {
    const name = help[engine].name;
    if (name && !name.includes('<')) return { engine, name };
  }
  return null;
}
