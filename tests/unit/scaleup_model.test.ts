// "Scale it up" with a model section: the Hugging Face path and the LoRA settings land under each
// engine's own keys, which exist in the engines' config lists (the same fixtures the other keys
// are checked against in tests/cli/export_keys.test.ts); without a section the job is unchanged.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildJob } from '../../src/export/job.ts';
import { type JobModel, OPENRLHF_LORA_FLAGS, VERL_LORA_KEYS, VERL_LORA_LOAD_FORMAT } from '../../src/export/model.ts';
import { JobError, planJob } from '../../src/export/plan.ts';
import { engineCommand, renderScript } from '../../src/export/script.ts';
import { DEFAULT_CONFIG, type PpoConfig } from '../../src/rl/config.ts';

const verlFacts = JSON.parse(readFileSync('tests/fixtures/verl_config_keys.json', 'utf8'));
const rlhfFacts = JSON.parse(readFileSync('tests/fixtures/openrlhf_ppo_flags.json', 'utf8'));
const VERL_KEYS = new Set<string>(verlFacts.keys);
const RLHF_FLAGS: Record<string, number> = rlhfFacts.flags;

const GAE: PpoConfig = DEFAULT_CONFIG;
const GRPO: PpoConfig = { ...DEFAULT_CONFIG, advantageEstimator: 'group_norm' };
const PATH = 'meta-llama/Llama-3.2-1B-Instruct';
const LORA: JobModel = { modelPath: PATH, lora: { r: 16, alpha: 24, targets: ['q_proj', 'v_proj'] } };
const ALL_LINEAR: JobModel = { modelPath: PATH, lora: { r: 8, alpha: 16, targets: ['all-linear'] } };
const FULL: JobModel = { modelPath: PATH, lora: null };

function script(engine: 'verl' | 'openrlhf', config: PpoConfig, model?: JobModel): string {
  const plan = planJob(config, { engine, gpus: 1, trainRows: 64, model });
  return renderScript(plan, engineCommand(plan));
}

/** The argument lines after the program line, without the trailing " \" and the final "$@". */
function args(text: string): string[] {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l.startsWith('python3 -m '));
  const end = lines.indexOf('  "$@"');
  expect(start).toBeGreaterThan(0);
  expect(end).toBeGreaterThan(start);
  return lines.slice(start + 1, end).map((l) => l.slice(2, -2));
}

/** Undo shellWord for the words these jobs use: '…' and "${VAR}". */
const unquote = (w: string) => w.replace(/^'(.*)'$/, '$1').replace(/^"\$\{([A-Z_]+)\}(.*)"$/, '$$$1$2');

function verl(config: PpoConfig, model?: JobModel): Map<string, string> {
  return new Map(args(script('verl', config, model)).map((l) => [l.slice(0, l.indexOf('=')), unquote(l.slice(l.indexOf('=') + 1))]));
}

function rlhf(config: PpoConfig, model?: JobModel): Map<string, string[]> {
  return new Map(
    args(script('openrlhf', config, model)).map((l) => {
      const [flag, ...vals] = l.split(' ');
      return [flag, vals.map(unquote)];
    }),
  );
}

const modelLine = (text: string) => text.split('\n').find((l) => l.startsWith('MODEL='));

describe('verl job with a model section', () => {
  it('sets the LoRA keys of actor and critic with their values, and the safetensors load format', () => {
    const v = verl(GAE, LORA);
    for (const block of ['actor_rollout_ref.model', 'critic.model']) {
      expect(v.get(`${block}.path`)).toBe('$MODEL');
      expect(v.get(`${block}.lora_rank`)).toBe('16');
      expect(v.get(`${block}.lora_alpha`)).toBe('24');
      expect(v.get(`${block}.target_modules`)).toBe('[q_proj,v_proj]');
    }
    expect(v.get('actor_rollout_ref.rollout.load_format')).toBe('safetensors');
    expect(modelLine(script('verl', GAE, LORA))).toBe(`MODEL="\${MODEL:-${PATH}}"`);
  });

  it('passes all-linear as a bare string, and has no critic keys without GAE', () => {
    const v = verl(GRPO, ALL_LINEAR);
    expect(v.get('actor_rollout_ref.model.target_modules')).toBe('all-linear');
    expect(v.get('actor_rollout_ref.model.lora_rank')).toBe('8');
    expect([...v.keys()].filter((k) => k.startsWith('critic.'))).toEqual([]);
  });

  it('every key it emits exists in verl 0.9.0 trainer config, the LoRA keys among them', () => {
    const lora = [VERL_LORA_KEYS.rank, VERL_LORA_KEYS.alpha, VERL_LORA_KEYS.targets].flatMap((k) => [`actor_rollout_ref.model.${k}`, `critic.model.${k}`]);
    for (const key of [...lora, VERL_LORA_LOAD_FORMAT.key]) expect(VERL_KEYS.has(key), key).toBe(true);
    for (const [config, model] of [
      [GAE, LORA],
      [GRPO, ALL_LINEAR],
      [GAE, FULL],
    ] as const) {
      for (const key of verl(config, model).keys()) expect(VERL_KEYS.has(key), `unknown verl key ${key}`).toBe(true);
    }
  });

  it('without LoRA, or without a section, sets no LoRA key; only the section changes the MODEL default', () => {
    const isLora = (k: string) => /lora|target_modules|load_format/.test(k);
    expect([...verl(GAE, FULL).keys()].filter(isLora)).toEqual([]);
    expect([...verl(GAE).keys()].filter(isLora)).toEqual([]);
    expect(modelLine(script('verl', GAE, FULL))).toBe(`MODEL="\${MODEL:-${PATH}}"`);
    expect(modelLine(script('verl', GAE))).toBe(`MODEL="\${MODEL:-Qwen/Qwen2.5-0.5B-Instruct}"`);
    // Apart from the model lines, a section without LoRA leaves the script as it was.
    const strip = (t: string) => t.split('\n').filter((l) => !/^(MODEL=|# model:|# The policy)/.test(l));
    expect(strip(script('verl', GAE, FULL))).toEqual(strip(script('verl', GAE)));
  });
});

describe('OpenRLHF job with a model section', () => {
  it('sets the --ds.lora flags with their values; the model path reaches actor and critic', () => {
    const o = rlhf(GAE, LORA);
    expect(o.get('--ds.lora.rank')).toEqual(['16']);
    expect(o.get('--ds.lora.alpha')).toEqual(['24']);
    expect(o.get('--ds.lora.target_modules')).toEqual(['q_proj', 'v_proj']);
    expect(o.get('--actor.model_name_or_path')).toEqual(['$MODEL']);
    expect(o.get('--critic.model_name_or_path')).toEqual(['$MODEL']);
    expect(modelLine(script('openrlhf', GAE, LORA))).toBe(`MODEL="\${MODEL:-${PATH}}"`);
  });

  it('leaves all-linear to the parser default (a list item would be read as a module name) and says so', () => {
    const text = script('openrlhf', GRPO, ALL_LINEAR);
    const o = rlhf(GRPO, ALL_LINEAR);
    expect(o.get('--ds.lora.rank')).toEqual(['8']);
    expect(o.has('--ds.lora.target_modules')).toBe(false);
    expect(text).toMatch(/^# LoRA rank 8, alpha 16 .*--ds\.lora\.target_modules is left at its default all-linear/m);
  });

  it("every flag exists in train_ppo_ray's parser with its number of values; none without LoRA", () => {
    for (const f of Object.values(OPENRLHF_LORA_FLAGS)) expect(f in RLHF_FLAGS, f).toBe(true);
    for (const [flag, vals] of rlhf(GAE, LORA)) {
      expect(flag in RLHF_FLAGS, `unknown OpenRLHF flag ${flag}`).toBe(true);
      // -1: one or more values (nargs "*" / "+").
      if (RLHF_FLAGS[flag] === -1) expect(vals.length, flag).toBeGreaterThan(0);
      else expect(vals.length, flag).toBe(RLHF_FLAGS[flag]);
    }
    expect([...rlhf(GAE, FULL).keys()].filter((f) => f.startsWith('--ds.lora'))).toEqual([]);
    expect([...rlhf(GAE).keys()].filter((f) => f.startsWith('--ds.lora'))).toEqual([]);
  });
});

describe("the job's README", () => {
  const readme = (engine: 'verl' | 'openrlhf', model?: JobModel) => {
    const job = buildJob(GAE, { engine, gpus: 1, trainRows: 64, model });
    return new TextDecoder().decode(job.files.find((f) => f.path === 'README.md')!.data);
  };

  it('names the model and the LoRA settings with their engine keys when present', () => {
    const v = readme('verl', LORA);
    expect(v).toContain(`# uses ${PATH}`);
    expect(v).toMatch(/LoRA: rank 16, alpha 24 \(the update is scaled by alpha \/ rank = 1\.5\), target modules `q_proj`, `v_proj`/);
    expect(v).toContain('`actor_rollout_ref.model.lora_rank`');
    const o = readme('openrlhf', ALL_LINEAR);
    expect(o).toMatch(/LoRA: rank 8, alpha 16 .*`all-linear`/);
    expect(o).toContain('`--ds.lora.target_modules` (left at its default all-linear)');
  });

  it('says every weight trains without LoRA, and says nothing of a model section without one', () => {
    expect(readme('verl', FULL)).toMatch(/The model, chosen at export: `meta-llama\/Llama-3\.2-1B-Instruct`.* Every weight is trained \(no LoRA\)/s);
    const plain = readme('openrlhf');
    expect(plain).not.toMatch(/LoRA|chosen at export/);
    expect(plain).toContain('# uses Qwen/Qwen2.5-0.5B-Instruct');
  });
});

describe('a bad model section', () => {
  const plan = (model: JobModel) => () => planJob(GAE, { engine: 'verl', gpus: 1, trainRows: 64, model });
  const lora = (over: Partial<NonNullable<JobModel['lora']>>): JobModel => ({ modelPath: PATH, lora: { ...LORA.lora!, ...over } });

  it('is refused naming the field and what it allows', () => {
    expect(plan(lora({ r: 0 }))).toThrow(JobError);
    expect(plan(lora({ r: 0 }))).toThrow('lora.r = "0": allowed: an integer from 1 to 512');
    expect(plan(lora({ r: 513 }))).toThrow(/lora\.r = "513"/);
    expect(plan(lora({ alpha: 2.5 }))).toThrow('lora.alpha = "2.5": allowed: an integer from 1 to 1024');
    expect(plan(lora({ targets: ['all-linear', 'q_proj'] }))).toThrow(/lora\.targets = "all-linear,q_proj": allowed: all-linear alone/);
    expect(plan(lora({ targets: [] }))).toThrow(/lora\.targets/);
    expect(plan(lora({ targets: ['q_proj', 'q_proj'] }))).toThrow(/lora\.targets/);
    expect(plan({ modelPath: 'my model', lora: null })).toThrow(/modelPath = "my model"/);
    expect(plan({ modelPath: '--pretrain', lora: null })).toThrow(/modelPath/);
    expect(plan({ modelPath: 'a,b', lora: null })).toThrow(/modelPath/);
  });

  it('accepts the edges of the ranges and dotted module names', () => {
    expect(plan(lora({ r: 512, alpha: 1024 }))).not.toThrow();
    expect(plan(lora({ r: 1, alpha: 1, targets: ['c_attn', 'mlp.c_proj'] }))).not.toThrow();
    expect(plan({ modelPath: '/data/models/qwen2.5-7b_v1', lora: null })).not.toThrow();
  });
});
