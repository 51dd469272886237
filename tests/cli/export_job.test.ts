// The exported job's files read back: Parquet with a Parquet reader (hyparquet), the zip with an
// unzipper (fflate), and the CLI writing a folder. Rows must be the playground's own prompts:
// the training generator with the run seed, and exactly the held-out set.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { unzipSync } from 'fflate';
import { parquetReadObjects, parquetMetadata } from 'hyparquet';
import { afterAll, describe, expect, it } from 'vitest';
import { heldOutPrompts } from '../../src/export/dataset.ts';
import { buildJob, scriptName } from '../../src/export/job.ts';
import { JobError, planJob } from '../../src/export/plan.ts';
import { zipJob } from '../../src/export/zip.ts';
import { DEFAULT_CONFIG, type PpoConfig } from '../../src/rl/config.ts';
import { arithmeticAnswer, formatNumber, isHeldOutPair, parseArithmeticPrompt } from '../../src/tasks/arithmetic.ts';
import { getTask, type TaskName } from '../../src/tasks/index.ts';
import { isHeldOutStart, SUBJECTS, VERBS } from '../../src/tasks/sentiment.ts';
import { Rng } from '../../src/util/rng.ts';

const dir = mkdtempSync(join(tmpdir(), 'export-job-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Row = Record<string, unknown> & {
  prompt: { role: string; content: string }[];
  reward_model: { style: string; ground_truth: string };
  extra_info: { split: string; index: bigint | number; playground_prompt: string };
};

async function readRows(bytes: Uint8Array): Promise<Row[]> {
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  return (await parquetReadObjects({ file })) as Row[];
}

function isHeldOut(task: TaskName, prompt: string): boolean {
  if (task === 'arithmetic') {
    const p = parseArithmeticPrompt(prompt);
    return isHeldOutPair(p.a, p.b);
  }
  if (task === 'sentiment') {
    const [, subject, verb] = prompt.split(' ');
    return isHeldOutStart(SUBJECTS.indexOf(subject as never), VERBS.indexOf(verb as never));
  }
  return true; // stop: the 12 prompts are both the training and the evaluation set
}

describe('exported job files', () => {
  for (const task of ['arithmetic', 'stop', 'sentiment'] as TaskName[]) {
    it(`${task}: train.parquet and test.parquet hold the playground's prompts in verl's row format`, async () => {
      const config: PpoConfig = { ...DEFAULT_CONFIG, task, seed: 7 };
      const job = buildJob(config, { engine: 'verl', gpus: 1, trainRows: 300 });
      const file = (name: string) => job.files.find((f) => f.path === name)!.data;
      const train = await readRows(file('train.parquet'));
      const test = await readRows(file('test.parquet'));
      const meta = parquetMetadata(file('train.parquet').buffer as ArrayBuffer);
      expect(meta.schema.map((s) => s.name)).toEqual(expect.arrayContaining(['data_source', 'prompt', 'ability', 'reward_model', 'extra_info', 'label']));

      // Training prompts: the task's generator with the run seed, in order.
      const rng = new Rng(7);
      const t = getTask(task);
      expect(train.length).toBe(300);
      expect(train.map((r) => r.extra_info.playground_prompt)).toEqual(Array.from({ length: 300 }, () => t.trainPrompt(rng)));
      // Held-out prompts: the whole evaluation set, once each, and (where the task has one) disjoint from training.
      expect(test.map((r) => r.extra_info.playground_prompt)).toEqual(heldOutPrompts(task));
      // Every held-out problem once: 231 operand pairs for arithmetic (the task's hash hold-out).
      expect(test.length).toBe(task === 'arithmetic' ? 231 : 12);
      if (task !== 'stop') {
        for (const r of train) expect(isHeldOut(task, r.extra_info.playground_prompt)).toBe(false);
        for (const r of test) expect(isHeldOut(task, r.extra_info.playground_prompt)).toBe(true);
      }
      for (const [split, rows] of [
        ['train', train],
        ['test', test],
      ] as const) {
        rows.forEach((r, i) => {
          expect(r.data_source).toBe(`ppo_playground/${task}`);
          expect(r.prompt.map((m) => m.role)).toEqual(['system', 'user']);
          expect(r.prompt[1].content).toBe(r.extra_info.playground_prompt);
          expect(r.prompt[0].content.length).toBeGreaterThan(20);
          expect(r.reward_model.style).toBe('rule');
          expect(r.label).toBe(r.reward_model.ground_truth);
          expect(r.extra_info.split).toBe(split);
          expect(Number(r.extra_info.index)).toBe(i);
          const p = r.extra_info.playground_prompt;
          if (task === 'arithmetic') expect(r.reward_model.ground_truth).toBe(formatNumber(arithmeticAnswer(p))); // zero-padded, as the rule wants
          if (task === 'stop') expect(r.reward_model.ground_truth).toBe(/^n=(\d+):$/.exec(p)![1]);
          if (task === 'sentiment') expect(r.reward_model.ground_truth).toBe('');
        });
      }
    });
  }

  it('zips the folder with every file intact and the launch script executable', () => {
    for (const engine of ['verl', 'openrlhf'] as const) {
      const job = buildJob({ ...DEFAULT_CONFIG, task: 'stop' }, { engine, gpus: 2, trainRows: 64 });
      const zip = zipJob('ppo-playground-stop-verl', job.files);
      const back = unzipSync(zip);
      expect(Object.keys(back).sort()).toEqual(job.files.map((f) => `ppo-playground-stop-verl/${f.path}`).sort());
      for (const f of job.files) expect(back[`ppo-playground-stop-verl/${f.path}`]).toEqual(f.data);
      expect(job.files.find((f) => f.path === scriptName(engine))!.mode).toBe(0o755);
      // The Unix mode sits in the central directory's external attributes (high 16 bits).
      const view = new DataView(zip.buffer, zip.byteOffset, zip.byteLength);
      let modes = 0;
      for (let at = 0; at + 46 <= zip.length; at++) {
        if (view.getUint32(at, true) !== 0x02014b50) continue;
        const nameLen = view.getUint16(at + 28, true);
        const name = new TextDecoder().decode(zip.subarray(at + 46, at + 46 + nameLen));
        const mode = (view.getUint32(at + 38, true) >>> 16) & 0o777;
        expect(mode).toBe(name.endsWith('.sh') ? 0o755 : 0o644);
        modes++;
      }
      expect(modes).toBe(job.files.length);
    }
  });

  it('refuses a GPU count the minibatch cannot split over, naming the field and the allowed counts', () => {
    expect(() => planJob(DEFAULT_CONFIG, { engine: 'verl', gpus: 3, trainRows: 64 })).toThrow(JobError);
    expect(() => planJob(DEFAULT_CONFIG, { engine: 'verl', gpus: 3, trainRows: 64 })).toThrow(/gpus = 3: .*allowed: 1, 2, 4, 8, 16/);
    expect(() => planJob(DEFAULT_CONFIG, { engine: 'openrlhf', gpus: 1, trainRows: 4 })).toThrow(/trainRows = 4/);
    expect(() => planJob({ ...DEFAULT_CONFIG, clipLow: 2 }, { engine: 'verl', gpus: 1, trainRows: 64 })).toThrow(/clipLow = 2/);
  });
});

describe('npm run export-job', { timeout: 60_000 }, () => {
  const cli = (...args: string[]) => spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/export_job.ts', ...args], { encoding: 'utf8', timeout: 60_000 });

  it('writes the job folder for an engine and a task, with a --config file', () => {
    const out = join(dir, 'cli-openrlhf');
    const configFile = join(dir, 'config.json');
    writeFileSync(configFile, JSON.stringify({ advantageEstimator: 'group_norm', promptsPerBatch: 16 }));
    const r = cli('--engine', 'openrlhf', '--task', 'sentiment', '--config', configFile, '--rows', '128', '--out', out);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    for (const f of ['README.md', 'run_openrlhf.sh', 'reward.py', 'train.parquet', 'test.parquet']) expect(existsSync(join(out, f))).toBe(true);
    expect(statSync(join(out, 'run_openrlhf.sh')).mode & 0o777).toBe(0o755);
    const script = readFileSync(join(out, 'run_openrlhf.sh'), 'utf8');
    expect(script).toContain('--algo.advantage.estimator group_norm');
    expect(script).toContain('--rollout.batch_size 16');
    expect(readFileSync(join(out, 'README.md'), 'utf8')).toMatch(/128 training prompts/);
  });

  it('exits 2 naming each bad setting', () => {
    const r = cli('--engine', 'deepspeed', '--task', 'arithmetic', '--gpus', '0', '--out', join(dir, 'bad'));
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--engine = "deepspeed": allowed: verl, openrlhf/);
    expect(r.stderr).toMatch(/--gpus = "0": allowed: an integer from 1 to 64/);
    const odd = cli('--engine', 'verl', '--task', 'arithmetic', '--gpus', '3', '--out', join(dir, 'odd'));
    expect(odd.status).toBe(2);
    expect(odd.stderr).toMatch(/gpus = 3: a minibatch of 16 sequences must split evenly/);
    expect(existsSync(join(dir, 'odd'))).toBe(false);
  });

  it('writes a LoRA job for --model, alpha 2·rank and all-linear by default, valid bash for both engines', () => {
    const verl = join(dir, 'cli-lora-verl');
    const r = cli('--engine', 'verl', '--task', 'arithmetic', '--rows', '64', '--out', verl, '--model', 'Qwen/Qwen2.5-1.5B-Instruct', '--lora-rank', '32');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const script = readFileSync(join(verl, 'run_verl.sh'), 'utf8');
    expect(script).toContain(`MODEL="\${MODEL:-Qwen/Qwen2.5-1.5B-Instruct}"`);
    expect(script).toContain('actor_rollout_ref.model.lora_rank=32 \\');
    expect(script).toContain('actor_rollout_ref.model.lora_alpha=64 \\');
    expect(script).toContain('actor_rollout_ref.model.target_modules=all-linear \\');
    expect(script).toContain('critic.model.lora_rank=32 \\');
    expect(spawnSync('bash', ['-n', join(verl, 'run_verl.sh')]).status).toBe(0);
    expect(readFileSync(join(verl, 'README.md'), 'utf8')).toMatch(/LoRA: rank 32, alpha 64/);

    const rlhf = join(dir, 'cli-lora-openrlhf');
    const o = cli(
      '--engine',
      'openrlhf',
      '--task',
      'stop',
      '--rows',
      '64',
      '--out',
      rlhf,
      '--model',
      'gpt2',
      '--lora-rank',
      '8',
      '--lora-alpha',
      '16',
      '--lora-targets',
      'c_attn,c_proj,c_fc',
    );
    expect(o.stderr).toBe('');
    expect(o.status).toBe(0);
    const flags = readFileSync(join(rlhf, 'run_openrlhf.sh'), 'utf8');
    expect(flags).toContain(`MODEL="\${MODEL:-gpt2}"`);
    expect(flags).toContain('--ds.lora.rank 8 \\');
    expect(flags).toContain('--ds.lora.alpha 16 \\');
    expect(flags).toContain('--ds.lora.target_modules c_attn c_proj c_fc \\');
    expect(spawnSync('bash', ['-n', join(rlhf, 'run_openrlhf.sh')]).status).toBe(0);
  });

  it('exits 2 naming each bad model or LoRA flag, and LoRA flags without --model', () => {
    const bad = cli(
      '--engine',
      'verl',
      '--task',
      'arithmetic',
      '--out',
      join(dir, 'bad-lora'),
      '--model',
      'my model',
      '--lora-rank',
      '0',
      '--lora-alpha',
      '2000',
      '--lora-targets',
      'all-linear,q_proj',
    );
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/invalid settings \(4\)/);
    expect(bad.stderr).toMatch(/--model = "my model": allowed: a Hub id or path/);
    expect(bad.stderr).toMatch(/--lora-rank = "0": allowed: an integer from 1 to 512/);
    expect(bad.stderr).toMatch(/--lora-alpha = "2000": allowed: an integer from 1 to 1024/);
    expect(bad.stderr).toMatch(/--lora-targets = "all-linear,q_proj": allowed: all-linear alone/);
    const noModel = cli('--engine', 'openrlhf', '--task', 'arithmetic', '--out', join(dir, 'no-model'), '--lora-rank', '8');
    expect(noModel.status).toBe(2);
    expect(noModel.stderr).toMatch(/--lora-rank: needs --model/);
    const noRank = cli('--engine', 'openrlhf', '--task', 'arithmetic', '--out', join(dir, 'no-rank'), '--model', 'gpt2', '--lora-targets', 'c_attn');
    expect(noRank.status).toBe(2);
    expect(noRank.stderr).toMatch(/--lora-targets: needs --lora-rank/);
    for (const d of ['bad-lora', 'no-model', 'no-rank']) expect(existsSync(join(dir, d))).toBe(false);
  });
});
