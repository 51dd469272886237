// What each chart means, for the "?" beside its title: the formula, what a healthy and a sick
// curve look like, and the name the same number has in verl's and OpenRLHF's logs, so a student
// can hold this page's chart beside a real run's TensorBoard or wandb panel. Every user-facing
// string of the chart help lives here (the page is translated from this table).

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

/** The held-out chart is not a trainer metric; it has this key. */
export const HELD_OUT_KEY = 'heldout';

/** The teaching views' charts (ViewHelp), which show no single metric, have these keys. */
export const TEACH_VIEW_KEYS = ['clipping', 'kl_shaping'] as const;
export type TeachViewKey = (typeof TEACH_VIEW_KEYS)[number];

export const CHART_HELP: Readonly<Record<string, ChartHelp>> = {
  reward_mean: {
    formula: '\\bar{s} = \\frac{1}{B}\\sum_{b=1}^{B} s_b',
    what: 'The mean score the reward function gives the batch’s sampled responses, before any KL penalty.',
    healthy: 'Rises, fast at first, then levels off near what the task allows; small wiggles from sampling.',
    sick: 'Flat from the start (no learning signal: all samples score alike, or the learning rate is too low); a jump to the maximum while held-out accuracy stays put (reward hacking); a sudden fall (policy collapse).',
    verl: { name: 'critic/score/mean', note: 'critic/rewards/mean is the same after the KL penalty' },
    openrlhf: { name: 'reward' },
  },
  [HELD_OUT_KEY]: {
    formula: '\\mathrm{acc} = \\frac{1}{N}\\sum_{i=1}^{N} \\mathbf{1}[\\,y_i \\text{ correct}\\,]',
    what: 'The share of prompts never trained on that the model answers correctly, sampled and greedy.',
    healthy: 'Climbs with the training reward; greedy at or above sampled.',
    sick: 'Training reward climbs while this stays flat or falls: the policy games the reward or memorises the training prompts.',
    verl: { name: 'val-core/<data_source>/reward/mean@1', note: 'verl’s validation score, when a validation set is given' },
    openrlhf: { name: 'eval_<dataset>_pass1', note: 'with --eval_dataset; older versions log eval reward only' },
  },
  policy_loss: {
    formula:
      'L^{\\mathrm{clip}} = -\\frac{1}{|\\mathcal{T}|}\\sum_{t} \\min\\left(\\rho_t A_t,\\ \\operatorname{clip}(\\rho_t, 1-\\varepsilon_{\\mathrm{low}}, 1+\\varepsilon_{\\mathrm{high}})\\, A_t\\right),\\quad \\rho_t = \\frac{\\pi_\\theta(a_t)}{\\pi_{\\mathrm{old}}(a_t)}',
    what: 'The clipped surrogate the actor minimises, averaged over response tokens.',
    healthy: 'Small and noisy around 0 (advantages are whitened to mean 0); its level says little, its spikes say more.',
    sick: 'Large spikes or a steady drift far from 0 together with a high clip fraction: the update steps too far from π_old.',
    verl: { name: 'actor/pg_loss' },
    openrlhf: { name: 'policy_loss' },
  },
  value_loss: {
    formula: 'L^{V} = \\frac{1}{2}\\,\\max\\left((V_t - R_t)^2,\\ (\\operatorname{clip}(V_t, V^{\\mathrm{old}}_t \\pm \\varepsilon_v) - R_t)^2\\right)',
    what: 'How far the critic’s values are from the returns it is fitted to (only with GAE, which has a critic).',
    healthy: 'Falls over the first iterations, then stays low while the reward moves.',
    sick: 'Grows or oscillates: the critic cannot keep up (critic learning rate too high or too low), and GAE’s advantages become noise.',
    verl: { name: 'critic/vf_loss' },
    openrlhf: { name: 'critic_loss' },
  },
  clipfrac: {
    formula:
      '\\frac{1}{|\\mathcal{T}|}\\sum_t \\mathbf{1}\\left[\\rho_t A_t > \\operatorname{clip}(\\rho_t, 1-\\varepsilon_{\\mathrm{low}}, 1+\\varepsilon_{\\mathrm{high}}) A_t\\right]',
    what: 'The share of response tokens whose ratio left the clip range on the side that stops their gradient.',
    healthy: 'A few percent (0.01–0.2): the update moves the policy, and clipping only trims the outliers.',
    sick: 'Above ~0.3 (steps too large: lower the learning rate or the epochs); exactly 0 with several updates per batch (the policy is not moving).',
    verl: { name: 'actor/pg_clipfrac', note: 'actor/pg_clipfrac_lower counts the dual clip' },
    openrlhf: { name: 'ppo_clip_ratio' },
  },
  kl: {
    formula: '\\mathrm{KL} = \\frac{\\sum_{b,t} m_{b,t}\\, k(\\log\\pi_\\theta - \\log\\pi_{\\mathrm{ref}})}{\\sum_{b,t} m_{b,t}}',
    what: 'The KL estimate between the policy and the frozen reference, per token over the whole batch, with the estimator chosen in the settings.',
    healthy: 'Starts at 0 and grows slowly to a plateau; β (or the KL loss) holds it there.',
    sick: 'Grows without bound (β too small: the policy drifts to reward hacking or gibberish); stays at 0 while the reward climbs (it cannot: check the estimator).',
    verl: { name: 'actor/reward_kl_penalty', note: 'with the KL in the reward; actor/kl_loss with the KL loss' },
    openrlhf: { name: 'kl' },
  },
  kl_token_mean: {
    formula: '\\overline{\\mathrm{KL}} = \\frac{1}{B}\\sum_b \\frac{\\sum_t m_{b,t}\\, k_{b,t}}{\\sum_t m_{b,t}}',
    what: 'Each response’s mean per-token KL, averaged over responses: the number the adaptive controller reads.',
    healthy: 'With the adaptive controller: settles near the dashed target. Otherwise: like KL.',
    sick: 'Stays far above the target while β (or the KL-loss coefficient) keeps rising: the horizon is too long or the learning rate too high.',
    verl: { name: 'actor/reward_kl_penalty', note: 'verl averages per response first, as here' },
    openrlhf: { name: null, note: 'OpenRLHF’s kl weights responses by their length (the KL chart)' },
  },
  beta: {
    formula: 'r_t = -\\beta\\, k_t + \\mathbf{1}[t = T]\\, s',
    what: 'β, the weight of the per-token KL penalty subtracted from the reward; the adaptive controller moves it.',
    healthy: 'Fixed: flat. Adaptive: rises while the KL is above target, falls while below, then settles.',
    sick: 'Adaptive β racing to very large values (the KL cannot be held: the learning rate is too high) or to 0 (the target is looser than the policy ever drifts).',
    verl: { name: 'actor/reward_kl_penalty_coeff' },
    openrlhf: { name: null, note: 'the coefficient (kl_ctl.value) is applied but not logged' },
  },
  kl_loss_coef: {
    formula: 'L = L^{\\mathrm{clip}} + c_{\\mathrm{KL}}\\cdot \\frac{1}{|\\mathcal{T}|}\\sum_t k(\\log\\pi_\\theta - \\log\\pi_{\\mathrm{ref}})',
    what: 'The weight of the KL term in the policy loss (GRPO style); the adaptive controller moves it when the KL is only in the loss, as OpenRLHF does.',
    healthy: 'Fixed: flat. Adaptive: moves toward whatever holds the KL per token at its target, then settles.',
    sick: 'Adaptive coefficient climbing without end: the KL loss cannot hold the policy; lower the learning rate.',
    verl: { name: 'actor/kl_coef' },
    openrlhf: { name: null, note: 'kl_ctl.value is passed to the actor as its KL-loss weight but not logged' },
  },
  kl_loss: {
    formula: 'L^{\\mathrm{KL}} = \\frac{1}{|\\mathcal{T}|}\\sum_t k(\\log\\pi_\\theta - \\log\\pi_{\\mathrm{ref}})',
    what: 'The KL term of the loss itself, before its coefficient, measured on the policy being updated.',
    healthy: 'Small and slowly growing, held down by its coefficient.',
    sick: 'Rising steadily with a coefficient that does not react: the policy leaves the reference.',
    verl: { name: 'actor/kl_loss' },
    openrlhf: { name: 'kl', note: 'with --algo.kl.use_loss the kl entry is this term' },
  },
  approx_kl: {
    formula:
      '\\widehat{\\mathrm{KL}}(\\pi_{\\mathrm{old}}\\Vert\\pi_\\theta) = \\frac{1}{|\\mathcal{T}|}\\sum_t \\left(\\log\\pi_{\\mathrm{old}}(a_t) - \\log\\pi_\\theta(a_t)\\right)',
    what: 'How far one update moved the policy from the one that sampled the batch.',
    healthy: 'Small (around 0.001–0.02) and steady.',
    sick: 'Spikes above ~0.05: the step is too large (lower the learning rate, or set Early-stop KL); exactly 0 with one update per batch, by construction.',
    verl: { name: 'actor/ppo_kl' },
    openrlhf: { name: 'ppo_kl' },
  },
  entropy: {
    formula: 'H = -\\frac{1}{|\\mathcal{T}|}\\sum_t \\sum_{v} \\pi_\\theta(v \\mid x_{<t}) \\log \\pi_\\theta(v \\mid x_{<t})',
    what: 'How spread the policy’s next-token distribution is, over response tokens.',
    healthy: 'Falls slowly as the policy grows confident.',
    sick: 'Collapses to near 0 early (the policy stops exploring: every sample the same) or climbs (the policy turns to noise).',
    verl: { name: 'actor/entropy' },
    openrlhf: { name: 'entropy_loss', note: 'logged when --entropy_loss_coef is set' },
  },
  explained_variance: {
    formula: '\\mathrm{EV} = 1 - \\frac{\\operatorname{Var}[R - V]}{\\operatorname{Var}[R]}',
    what: 'How much of the returns’ spread the critic predicts (1 perfect, 0 no better than a constant).',
    healthy: 'Rises toward 0.5–1 as the critic learns.',
    sick: 'Stays at or below 0: the critic’s values are noise, and so are GAE’s advantages.',
    verl: { name: 'critic/vf_explained_var' },
    openrlhf: { name: null, note: 'not logged; its critic logs critic_loss and values' },
  },
  response_length_mean: {
    formula: '\\bar{\\ell} = \\frac{1}{B}\\sum_b \\sum_t m_{b,t}',
    what: 'The mean number of generated tokens per response (the action mask’s row sums).',
    healthy: 'Settles at the length the task needs.',
    sick: 'Drifts to the maximum (the policy rambles; often a reward that pays for length) or to 1 (it stops at once).',
    verl: { name: 'response_length/mean', note: 'response_length/clip_ratio counts responses cut at the maximum' },
    openrlhf: { name: 'response_length' },
  },
  rollout_old_kl: {
    formula: '\\frac{1}{|\\mathcal{T}|}\\sum_t \\left(\\log\\pi_{\\mathrm{rollout}}(a_t) - \\log\\pi_{\\mathrm{old}}(a_t)\\right)',
    what: 'The gap between the distribution the sampler drew from and π_old, which the loss uses; large in real engines (vLLM vs the trainer), where TIS corrects it.',
    healthy: 'Without top-k or top-p: 0 up to float rounding. With them: a small positive constant.',
    sick: 'Large or growing: the importance ratios are off before the update starts; enable TIS.',
    verl: {
      name: 'training/rollout_probs_diff_mean',
      note: 'the mean |p_rollout − p_old| of token probabilities, not of log-probabilities; newer verl adds rollout_corr/ metrics',
    },
    openrlhf: { name: 'vllm_kl' },
  },
  clipping: {
    formula:
      'L_t = \\max\\left(-A_t\\,\\rho_t,\\ -A_t\\operatorname{clip}(\\rho_t, 1-\\varepsilon_{\\mathrm{low}}, 1+\\varepsilon_{\\mathrm{high}})\\right),\\quad A_t < 0:\\ \\min(L_t,\\, -c\\,A_t),\\quad \\rho_t = \\frac{\\pi_\\theta(a_t)}{\\pi_{\\mathrm{old}}(a_t)}',
    what: 'The objective one token gets against its ratio ρ_t, for a positive and a negative advantage, with the last update step’s token ratios as a histogram: where the curve is flat the clip has stopped pushing that token.',
    healthy: 'Most ratios close to 1 and inside [1 − ε_low, 1 + ε_high]; a few tokens past a bound (clip fraction about 0.01 to 0.2); the dual clip seldom binds.',
    sick: 'A wide histogram with many tokens past the bounds (clip fraction above about 0.3): each update steps too far from π_old, so lower the learning rate or the epochs. Every ratio exactly 1 after several steps: the policy is not moving.',
    verl: { name: 'actor/pg_clipfrac', note: 'bounds actor.clip_ratio_low / clip_ratio_high, dual clip clip_ratio_c counted in actor/pg_clipfrac_lower' },
    openrlhf: { name: 'ppo_clip_ratio', note: 'bounds --eps_clip_low_high (or --eps_clip), dual clip --dual_clip' },
  },
  kl_shaping: {
    formula: 'r_t = -\\beta\\,\\mathrm{KL}_t + [\\,t = T\\,]\\, s,\\quad \\mathrm{KL}_t = \\log\\pi_{\\mathrm{old}}(a_t) - \\log\\pi_{\\mathrm{ref}}(a_t)\\ \\text{(k1)}',
    what: 'How one sampled response’s per-token rewards are built: a KL penalty on every token toward the reference policy, and the task score added at the last token.',
    healthy: 'Penalty bars small beside the score (β·KL a few percent of |s|) and spread over the tokens; they grow slowly as the policy moves away from the reference.',
    sick: 'Penalty bars dwarfing the score (β too large, or the KL exploding): the policy is pulled back to the reference and the reward stalls. No bars while the policy has moved (β = 0 or the KL not in the reward): nothing holds it near the reference, and reward hacking can follow.',
    verl: { name: 'actor/reward_kl_penalty', note: 'apply_kl_penalty with algorithm.use_kl_in_reward; β is actor/reward_kl_penalty_coeff' },
    openrlhf: { name: 'kl', note: 'compute_reward subtracts kl_coef·KL (--init_kl_coef) from each token’s reward' },
  },
  filtered_groups: {
    formula: '\\#\\{g : \\operatorname{std}(s_{g,1..n}) = 0\\}',
    what: 'Prompts whose samples all scored the same, dropped by DAPO’s dynamic sampling and replaced by fresh ones.',
    healthy: 'Falls as the policy’s answers start to differ in quality within a group.',
    sick: 'Near the batch size: almost every group is all-right or all-wrong, so almost nothing is learned (the task is too easy or too hard).',
    verl: { name: 'training/filter_groups/evicted_samples', note: 'verl 0.9 V1 trainer (replay_buffer.py): responses, not prompts, of the groups it dropped' },
    openrlhf: { name: null, note: 'dynamic filtering drops them without logging a count' },
  },
};

/** The labels of the help popover itself. */
export const HELP_UI = {
  open: (title: string) => `What ${title} means`,
  close: 'Close',
  formula: 'Formula',
  healthy: 'Healthy',
  sick: 'Sick',
  engines: 'In the logs of',
  verl: 'verl',
  openrlhf: 'OpenRLHF',
  noCounterpart: 'no counterpart',
} as const;
