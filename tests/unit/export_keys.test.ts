// Every key the exported run_verl.sh sets exists in verl's trainer config, every flag in
// run_openrlhf.sh exists in OpenRLHF's parser with the right number of values, and every value
// with choices is one of them — parsed back from the rendered scripts, over many configs.
import { ROLLOUT_RS_OPTIONS } from '../../src/reference/rolloutCorrection.ts';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { engineCommand, renderScript } from '../../src/export/job.ts';
import { planJob } from '../../src/export/plan.ts';
import { shellWord } from '../../src/export/shell.ts';
import { ADVANTAGE_ESTIMATORS, DEFAULT_CONFIG, GROUP_KL_ORDERS, KL_CONTROLLERS, KL_LOSS_ESTIMATORS, validateConfig, type PpoConfig } from '../../src/rl/config.ts';
import { PRESETS } from '../../src/rl/presets.ts';
import { KL_ESTIMATORS } from '../../src/reference/kl.ts';
import { LOSS_AGGS, NORM_SCALES } from '../../src/reference/aggregate.ts';
import { LOSS_MODES } from '../../src/reference/policyLoss.ts';

const verlFacts = JSON.parse(readFileSync('tests/fixtures/verl_config_keys.json', 'utf8'));
const rlhfFacts = JSON.parse(readFileSync('tests/fixtures/openrlhf_ppo_flags.json', 'utf8'));
const VERL_KEYS = new Set<string>(verlFacts.keys);
const VERL_CHOICES: Record<string, string[]> = verlFacts.choices;
// Keys appended with Hydra's `+`: read by verl's code, absent from the generated config.
const VERL_APPENDED = new Set<string>(verlFacts.appended.keys);
const VERL_MAIN_PROGRAM = 'python3 -m verl.trainer.main_ppo';
const RLHF_FLAGS: Record<string, number> = rlhfFacts.flags;
const RLHF_CHOICES: Record<string, string[]> = rlhfFacts.choices;

/** Undo shellWord: bare, '…' or "${VAR}rest" (kept as $VAR…). */
function unquote(word: string): string {
  if (word.startsWith("'") && word.endsWith("'")) return word.slice(1, -1).replace(/'\\''/g, "'");
  const v = /^"\$\{([A-Z_]+)\}(.*)"$/.exec(word);
  if (v) return `$${v[1]}${v[2]}`;
  expect(word, `unquoted word with shell specials: ${word}`).toMatch(/^[A-Za-z0-9_.,/:+=@%-]+$/);
  return word;
}

/** The argument lines of a rendered script (after the program line, before "$@"). */
function argLines(script: string, program: string): string[] {
  const lines = script.split('\n');
  const start = lines.indexOf(`${program} \\`);
  expect(start).toBeGreaterThan(0);
  const args = lines.slice(start + 1).filter((l) => l.trim() !== '');
  expect(args.at(-1)).toBe('  "$@"');
  return args.slice(0, -1).map((l) => {
    expect(l.endsWith(' \\')).toBe(true);
    return l.slice(2, -2);
  });
}

/** The verl program a rendered script runs: always main_ppo at the targeted release. */
function verlProgram(script: string): string {
  expect(script.split('\n')).toContain(`${VERL_MAIN_PROGRAM} \\`);
  return VERL_MAIN_PROGRAM;
}

function verlScript(config: PpoConfig, gpus = 1): string {
  const plan = planJob(config, { engine: 'verl', gpus, trainRows: 64 });
  return renderScript(plan, engineCommand(plan));
}

function verlOverrides(config: PpoConfig, gpus = 1): Map<string, string> {
  const script = verlScript(config, gpus);
  const m = new Map<string, string>();
  for (const line of argLines(script, verlProgram(script))) {
    const eq = line.indexOf('=');
    const key = line.slice(0, eq);
    expect(m.has(key), `duplicate ${key}`).toBe(false);
    m.set(key, unquote(line.slice(eq + 1)));
  }
  return m;
}

function rlhfFlags(config: PpoConfig, gpus = 1): Map<string, string[]> {
  const plan = planJob(config, { engine: 'openrlhf', gpus, trainRows: 64 });
  const script = renderScript(plan, engineCommand(plan));
  const m = new Map<string, string[]>();
  for (const line of argLines(script, 'python3 -m openrlhf.cli.train_ppo_ray')) {
    const [flag, ...vals] = line.split(' ');
    expect(m.has(flag), `duplicate ${flag}`).toBe(false);
    m.set(flag, vals.map(unquote));
  }
  return m;
}

const cfg = (over: Partial<PpoConfig>): PpoConfig => {
  const c = { ...DEFAULT_CONFIG, ...over };
  expect(validateConfig(c as PpoConfig & Record<string, unknown>)).toEqual([]);
  return c;
};

// Configs that between them take every value with choices and every branch of the mapping.
const CONFIGS: PpoConfig[] = [
  DEFAULT_CONFIG,
  ...ADVANTAGE_ESTIMATORS.map((advantageEstimator) => cfg({ advantageEstimator })),
  ...KL_ESTIMATORS.map((klEstimator) => cfg({ klEstimator, klController: 'adaptive' })),
  ...KL_LOSS_ESTIMATORS.map((klLossEstimator) => cfg({ useKlLoss: true, klInReward: false, klLossEstimator, advantageEstimator: 'group_norm' })),
  ...LOSS_AGGS.map((lossAgg) => cfg({ lossAgg })),
  cfg({ useKlLoss: true, klInReward: true, klController: 'adaptive' }),
  cfg({ klInReward: false, useKlLoss: false }),
  cfg({ dualClip: null, valueClip: null, maxGradNorm: 0, targetKl: 0.1, topK: 5, warmupSteps: 3, evalEvery: 0 }),
  cfg({ task: 'sentiment', rewardSource: 'model', advantageEstimator: 'rloo' }),
  cfg({ gamma: 0.9 }),
  cfg({ task: 'stop', promptsPerBatch: 6, miniBatches: 4, samplesPerPrompt: 4, noEosPenalty: -1 }),
  // The issue-9 knobs, each turned on (and together, the DAPO preset's shape).
  ...LOSS_MODES.map((lossMode) => cfg({ lossMode })),
  ...NORM_SCALES.map((normScale) => cfg({ normScale, lossAgg: 'seq-mean-token-sum-norm' })),
  cfg({ tisCap: 2 }),
  cfg({ tisCap: 1.5, lossMode: 'gspo', advantageEstimator: 'group_norm' }),
  cfg({ dynamicSampling: true, maxExtraRollouts: 0 }),
  cfg({ dynamicSampling: true, maxExtraRollouts: 16, advantageEstimator: 'group_norm', klInReward: true }),
  cfg({ overlongBuffer: 2, overlongPenalty: 0.5 }),
  cfg({
    advantageEstimator: 'group_norm',
    clipHigh: 0.28,
    dualClip: null,
    dynamicSampling: true,
    maxExtraRollouts: 2,
    overlongBuffer: 2,
    overlongPenalty: 1,
    klInReward: false,
    tisCap: 2,
    lossMode: 'cispo',
  }),
  cfg({ useKlLoss: true, klInReward: false, klController: 'adaptive', klLossEstimator: 'k3+' }),
  cfg({ useKlLoss: true, klInReward: true, klController: 'adaptive', klLossEstimator: 'k1+', klEstimator: 'k1_clamped' }),
  // Every estimator × KL placement × group KL order × controller, and each loss mode with TIS.
  ...ADVANTAGE_ESTIMATORS.flatMap((advantageEstimator) =>
    GROUP_KL_ORDERS.flatMap((groupKlOrder) =>
      KL_CONTROLLERS.flatMap((klController) =>
        [
          { klInReward: true, useKlLoss: false },
          { klInReward: false, useKlLoss: true },
          { klInReward: true, useKlLoss: true },
        ].map((kl) => cfg({ advantageEstimator, groupKlOrder, klController, ...kl })),
      ),
    ),
  ),
  ...LOSS_MODES.map((lossMode) => cfg({ lossMode, tisCap: 3, advantageEstimator: 'group_norm' })),
  cfg({ advantageEstimator: 'reinforce', gamma: 0.9 }),
  // Rollout correction: each IS level with the TIS cap, OpenRLHF's floor and the IcePop band; every rejection option.
  ...(['token', 'sequence'] as const).flatMap((rolloutIs) => [
    cfg({ tisCap: 2, rolloutIs }),
    cfg({ tisCap: 2, rolloutIs, tisLower: 0.5 }),
    cfg({ tisCap: 2, rolloutIs, icepopLower: 0.5 }),
  ]),
  ...ROLLOUT_RS_OPTIONS.map((rolloutRs) => cfg({ rolloutRs, rolloutRsThreshold: rolloutRs.endsWith('k1') ? 1.5 : 0.01 })),
  cfg({ tisCap: 3, rolloutIs: 'sequence', icepopLower: 0.2, rolloutRs: 'seq_mean_k3', rolloutRsThreshold: 0.001, advantageEstimator: 'group_norm' }),
  cfg({ dynamicSampling: true, overlongBuffer: 3, advantageEstimator: 'rloo', tisCap: 2, klInReward: true, groupKlOrder: 'verl' }),
  // Every preset (and every arm of a paired one) as the page would load it.
  ...presetConfigs(),
];

function presetConfigs(): PpoConfig[] {
  const out: PpoConfig[] = [];
  for (const p of PRESETS) {
    const base = { ...DEFAULT_CONFIG, ...p.values };
    if (p.arms) for (const a of p.arms) out.push(cfg({ ...base, ...a.values }));
    else out.push(cfg(base));
  }
  expect(out.length).toBeGreaterThan(PRESETS.length - 1);
  return out;
}

describe(`verl keys exist in verl's trainer config (${verlFacts.tag}, commit ${verlFacts.commit.slice(0, 7)})`, () => {
  it('every emitted key, every required key, every value among its choices, on every config', () => {
    for (const c of CONFIGS) {
      const v = verlOverrides(c);
      verlProgram(verlScript(c));
      for (const key of v.keys()) {
        if (key.startsWith('+')) {
          // Hydra refuses to append a key that exists, and main_ppo rejects an unknown one without `+`.
          expect(VERL_APPENDED.has(key.slice(1)), `unknown appended verl key ${key}`).toBe(true);
          expect(VERL_KEYS.has(key.slice(1)), `${key} exists in the config: append refused`).toBe(false);
        } else expect(VERL_KEYS.has(key), `unknown verl key ${key}`).toBe(true);
      }
      // The DAPO keys appear exactly when the knobs need them.
      expect(v.has('algorithm.filter_groups.enable')).toBe(c.dynamicSampling);
      expect(v.has('+reward.reward_kwargs.overlong_buffer_cfg.enable')).toBe(c.overlongBuffer > 0);
      // Whenever the dapo manager's overlong buffer is on it reads len, penalty_factor, log and max_resp_len.
      if (c.overlongBuffer > 0) for (const k of VERL_APPENDED) expect(v.has(`+${k}`), `missing +${k}`).toBe(true);
      for (const key of verlFacts.required.keys) expect(v.has(key), `missing required ${key}`).toBe(true);
      if (c.advantageEstimator === 'gae') for (const key of verlFacts.required.critic_keys) expect(v.has(key), `missing ${key}`).toBe(true);
      else expect([...v.keys()].some((k) => k.startsWith('critic.'))).toBe(false);
      for (const [key, choices] of Object.entries(VERL_CHOICES)) {
        if (v.has(key)) expect(choices, `${key}=${v.get(key)}`).toContain(v.get(key));
      }
      expect(v.get('actor_rollout_ref.actor.grad_clip')).not.toBe('0');
      expect(v.get('actor_rollout_ref.actor.optim.betas')).toMatch(/^\[[0-9.]+,[0-9.]+\]$/);
    }
  }, 60_000); // ~130 whole jobs: 3–6 s alone, more on a loaded machine

  it("maps the default config to the same numbers, batch sizes in verl's units", () => {
    const v = verlOverrides(DEFAULT_CONFIG);
    expect(v.get('algorithm.adv_estimator')).toBe('gae');
    expect(v.get('algorithm.kl_penalty')).toBe('kl');
    expect(v.get('algorithm.kl_ctrl.kl_coef')).toBe('0.05');
    expect(v.get('data.train_batch_size')).toBe('8'); // prompts
    expect(v.get('actor_rollout_ref.rollout.n')).toBe('4');
    expect(v.get('actor_rollout_ref.actor.ppo_mini_batch_size')).toBe('4'); // prompts: 8 / 2 minibatches
    expect(16 % Number(v.get('actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu'))).toBe(0);
    expect(v.get('actor_rollout_ref.actor.clip_ratio_c')).toBe('3');
    expect(v.get('critic.cliprange_value')).toBe('0.2');
    expect(v.get('trainer.n_gpus_per_node')).toBe('1');
    expect(v.get('trainer.logger')).toBe('["console"]');
    expect(v.get('actor_rollout_ref.model.path')).toBe('$MODEL');
    expect(v.get('data.train_files')).toBe('$JOB_DIR/train.parquet');
  });

  it('fixes the meanings that differ: max grad norm 0, Dr. GRPO, disabled clips; the per-token KL target passes through', () => {
    const v = verlOverrides(cfg({ maxGradNorm: 0, klController: 'adaptive', klTarget: 4, maxResponseLength: 8, dualClip: null, valueClip: null }));
    expect(v.get('actor_rollout_ref.actor.grad_clip')).toBe('1e9');
    expect(v.get('critic.grad_clip')).toBe('1e9');
    expect(v.get('algorithm.kl_ctrl.target_kl')).toBe('4'); // per token in both
    expect(v.get('actor_rollout_ref.actor.clip_ratio_c')).toBe('1e9');
    expect(v.get('critic.cliprange_value')).toBe('1e9');
    const d = verlOverrides(cfg({ advantageEstimator: 'dr_grpo' }));
    expect(d.get('algorithm.adv_estimator')).toBe('grpo');
    expect(d.get('algorithm.norm_adv_by_std_in_grpo')).toBe('False');
    // 8 GPUs: each gets 16 / 8 = 2 sequences of a minibatch.
    expect(verlOverrides(DEFAULT_CONFIG, 8).get('actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu')).toBe('2');
  });
});

describe(`OpenRLHF flags exist in train_ppo_ray's parser (${rlhfFacts.version})`, () => {
  it('every emitted flag with its number of values, every value among its choices, on every config', () => {
    for (const c of CONFIGS) {
      const o = rlhfFlags(c);
      for (const [flag, vals] of o) {
        expect(flag in RLHF_FLAGS, `unknown OpenRLHF flag ${flag}`).toBe(true);
        expect(vals.length, `${flag} takes ${RLHF_FLAGS[flag]} values`).toBe(RLHF_FLAGS[flag]);
        if (flag in RLHF_CHOICES) expect(RLHF_CHOICES[flag], `${flag} ${vals[0]}`).toContain(vals[0]);
        for (const v of vals) if (!v.startsWith('$')) expect(v).not.toMatch(/^$|undefined|NaN|null/);
      }
      for (const flag of [
        '--actor.model_name_or_path',
        '--vllm.num_engines',
        '--data.prompt_dataset',
        '--data.input_key',
        '--data.label_key',
        '--reward.remote_url',
        '--actor.num_gpus_per_node',
      ]) {
        expect(o.has(flag), `missing ${flag}`).toBe(true);
      }
      // Colocation: actor GPUs = vLLM engines × TP; the reference model matches the actor when it exists.
      const actorGpus = Number(o.get('--actor.num_gpus_per_node')![0]);
      expect(actorGpus).toBe(Number(o.get('--vllm.num_engines')![0]) * Number(o.get('--vllm.tensor_parallel_size')![0]));
      if (Number(o.get('--algo.kl.init_coef')![0]) > 0) expect(Number(o.get('--ref.num_gpus_per_node')![0])).toBe(actorGpus);
      expect(o.has('--critic.model_name_or_path')).toBe(c.advantageEstimator === 'gae');
      // Group estimators need more than one sample per prompt.
      if (rlhfFacts.rules.group_estimators_need_samples.includes(o.get('--algo.advantage.estimator')![0])) {
        expect(Number(o.get('--rollout.n_samples_per_prompt')![0])).toBeGreaterThan(1);
      }
      // The launcher's check: sample batches ≥ actor processes.
      const samples = Number(o.get('--rollout.n_samples_per_prompt')![0]) * Number(o.get('--rollout.batch_size')![0]);
      expect(Math.floor(samples / Number(o.get('--rollout.micro_batch_size')![0]))).toBeGreaterThanOrEqual(actorGpus);
    }
  }, 60_000); // ~130 whole jobs: 3–6 s alone, more on a loaded machine

  it("maps batch sizes to OpenRLHF's units and the KL settings to one coefficient", () => {
    const o = rlhfFlags(DEFAULT_CONFIG);
    expect(o.get('--rollout.batch_size')).toEqual(['8']); // prompts
    expect(o.get('--train.batch_size')).toEqual(['16']); // sequences per optimiser step: 32 / 2
    expect(o.get('--algo.kl.init_coef')).toEqual(['0.05']);
    expect(o.get('--algo.kl.estimator')).toEqual(['k1']);
    expect(o.get('--actor.eps_clip_low_high')).toEqual(['0.2', '0.2']);
    expect(o.get('--actor.adam.betas')).toEqual(['0.9', '0.999']);
    const loss = rlhfFlags(cfg({ useKlLoss: true, klInReward: false, klLossCoef: 0.002, klLossEstimator: 'k3', klController: 'adaptive' }));
    expect(loss.has('--algo.kl.use_loss')).toBe(true);
    expect(loss.get('--algo.kl.init_coef')).toEqual(['0.002']);
    expect(loss.get('--algo.kl.estimator')).toEqual(['k3']);
    // Both adapt the KL-loss coefficient when the KL is only in the loss: the target passes through.
    expect(loss.get('--algo.kl.target')).toEqual(['0.1']);
    // With the KL in the reward too, the playground adapts β while OpenRLHF would adapt the loss coefficient.
    expect(rlhfFlags(cfg({ useKlLoss: true, klInReward: true, klController: 'adaptive' })).has('--algo.kl.target')).toBe(false);
    const adaptive = rlhfFlags(cfg({ klController: 'adaptive', klTarget: 4, maxResponseLength: 8 }));
    expect(adaptive.get('--algo.kl.target')).toEqual(['4']);
    expect(rlhfFlags(cfg({ klInReward: false })).get('--algo.kl.init_coef')).toEqual(['0']);
  });
});

describe('rendered scripts', () => {
  it('are valid bash, quote lists for zsh, and name the engine versions and the GPU count', () => {
    for (const engine of ['verl', 'openrlhf'] as const) {
      const plan = planJob(cfg({ dualClip: null }), { engine, gpus: 2, trainRows: 64 });
      const script = renderScript(plan, engineCommand(plan));
      const r = spawnSync('bash', ['-n'], { input: script, encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
      expect(script).toMatch(
        engine === 'verl'
          ? new RegExp(`verl 0\\.9\\.0 .*commit ${verlFacts.commit.slice(0, 7)}`)
          : new RegExp(`OpenRLHF ${rlhfFacts.version.replace(/\./g, '\\.')} .*commit ${rlhfFacts.commit.slice(0, 7)}`),
      );
      expect(script).toMatch(/GPUs on this one node: 2/);
      expect(script).toMatch(/MODEL="\$\{MODEL:-Qwen\/Qwen2\.5-0\.5B-Instruct\}"/);
      if (engine === 'verl') expect(script).toContain("optim.betas='[0.9,0.999]'");
    }
  });

  it('the DAPO job runs main_ppo with no setup lines, and is valid bash', () => {
    const plan = planJob(cfg({ dynamicSampling: true, overlongBuffer: 2 }), { engine: 'verl', gpus: 1, trainRows: 64 });
    const script = renderScript(plan, engineCommand(plan));
    expect(spawnSync('bash', ['-n'], { input: script, encoding: 'utf8' }).status).toBe(0);
    expect(script).not.toMatch(/VERL_REPO|recipe\.dapo/);
  });

  it('shellWord quotes what bash or zsh would expand', () => {
    expect(shellWord('0.2')).toBe('0.2');
    expect(shellWord('-1')).toBe('-1');
    expect(shellWord('[0.9,0.999]')).toBe("'[0.9,0.999]'");
    expect(shellWord('["console"]')).toBe(`'["console"]'`);
    expect(shellWord("it's")).toBe(`'it'\\''s'`);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the shell's own ${…} expansion is what is checked
    expect(shellWord('$JOB_DIR/reward.py')).toBe('"${JOB_DIR}/reward.py"');
    expect(shellWord('')).toBe("''");
  });
});
