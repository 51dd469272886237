// npm run train -- --model DIR as a process, as issue #32 checks it: fresh synthetic folders (Qwen3
// with GRPO on WebGPU, Llama with GAE and a critic on WebGPU, GPT-2 on the float64 CPU backend;
// TEST_SEED) trained 3 iterations from a prompts file and a JavaScript reward function. Every
// metric is finite and the GAE run reports a value loss. The saved adapter is merged into the base
// by independent code with PEFT's rule (tests/helpers/peftMerge.ts: W + α/r·B·A, transposed for
// Conv1D); the merged folder's log-probs (`npm run logprobs`, no adapter) must equal
// `npm run logprobs --adapter` on the base within 2e-3 (the bound; f32 weights), and differ
// from the base's (training moved them). The chat arithmetic task reports greedy held-out accuracy
// before and after. Bad flags are refused in one line, exit status 2.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { SyntheticFamily } from '../../src/model/hf/synthetic.ts';
import { writeSynthetic } from '../../src/model/hf/synthetic.ts';
import { nodeFolderSink } from '../../src/node/hfFolder.ts';
import { promptIds } from '../../src/cli/hfModelArgs.ts';
import { plannedLoraTargets } from '../../src/model/hf/loraModules.ts';
import { planMemory } from '../../src/model/hf/memoryPlan.ts';
import { openHfFolder } from '../../src/model/hf/open.ts';
import { HfTokenizer } from '../../src/model/hf/tokenizer.ts';
import { NodeFolder } from '../../src/node/hfFolder.ts';
import { CpuBackend } from '../../src/backend/cpu/cpuBackend.ts';
import { modelFromCheckpoint } from '../../src/model/checkpoint.ts';
import { checkpointFolderFiles } from '../../src/model/hf/charModelFolder.ts';
import { greedySamples } from '../../src/rl/evaluation.ts';
import { getTask, taskTokenizer } from '../../src/tasks/index.ts';
import { mergePeftAdapter } from '../helpers/peftMerge.ts';
import { rng } from '../helpers/random.ts';

const VK = { VK_ICD_FILENAMES: process.env.VK_ICD_FILENAMES ?? '/usr/lib/chromium/vk_swiftshader_icd.json' };
const tsx = (script: string, args: string[]) =>
  spawnSync(process.execPath, ['--import', 'tsx', script, ...args], { encoding: 'utf8', timeout: 240_000, env: { ...process.env, ...VK } });

const root = mkdtempSync(join(tmpdir(), 'hf-train-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const PROMPTS = ['the cat sat', 'hello there', 'what is two plus two', 'say something kind', 'a b c'];
// The share of vowels in the response: a score that varies between samples, so advantages are not all 0.
const REWARD = '(prompt, response) => response.length === 0 ? 0 : (response.match(/[aeiou]/g) || []).length / response.length';

const CASES: [SyntheticFamily, string, 'webgpu' | 'cpu', string[]][] = [
  ['qwen3', 'group_norm', 'webgpu', ['--mini-batches', '2']],
  ['llama', 'gae', 'webgpu', []],
  ['gpt2', 'group_norm', 'cpu', []],
];

async function folderWith(family: SyntheticFamily, seed: number): Promise<string> {
  const dir = join(root, `${family}-${seed}`);
  await writeSynthetic({ family, dtype: 'F32', shards: 1, seed }, await nodeFolderSink(dir));
  return dir;
}

function files(): { prompts: string; reward: string } {
  const prompts = join(root, 'prompts.txt');
  const reward = join(root, 'reward.js');
  writeFileSync(prompts, `${PROMPTS.join('\n')}\n\n`);
  writeFileSync(reward, REWARD);
  return { prompts, reward };
}

const logprobsOf = (model: string, backend: string, extra: string[] = []) => {
  const r = tsx('src/cli/logprobs.ts', ['--model', model, '--backend', backend, '--weights', 'f32', '--prompt', 'what is two plus two', '--response', 'four, i think', ...extra]);
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout.trim()).logprobs as number[];
};

describe('npm run train -- --model', { timeout: 600_000 }, () => {
  it.each(CASES)('%s, %s on %s %j: 3 iterations, finite metrics; the saved adapter merged by PEFT’s rule scores as --adapter', async (family, estimator, backend, extra) => {
    const seed = rng(9500 + CASES.findIndex((c) => c[0] === family)).nextU32();
    const model = await folderWith(family, seed);
    const { prompts, reward } = files();
    const adapter = join(root, `${family}-adapter`);
    const out = join(root, `${family}.jsonl`);
    const args = ['--model', model, '--prompts', prompts, '--reward-function', reward, '--lora-rank', '4', '--iters', '3', '--estimator', estimator];
    const r = tsx('src/cli/train.ts', [
      ...args,
      '--batch',
      '3',
      '--max-new-tokens',
      '6',
      '--lr',
      '1e-2',
      '--backend',
      backend,
      '--weights',
      'f32',
      '--save-adapter',
      adapter,
      '--out',
      out,
      '--quiet',
      ...extra,
    ]);
    expect(r.status, r.stderr).toBe(0);
    const rows = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, number>);
    expect(rows.map((row) => row.iter)).toEqual([1, 2, 3]);
    const keys = ['reward_mean', 'kl', 'response_length_mean', 'policy_loss', 'clipfrac', ...(estimator === 'gae' ? ['value_loss'] : [])];
    for (const row of rows) {
      for (const k of keys) expect(Number.isFinite(row[k]), `${k} = ${row[k]}`).toBe(true);
      if (estimator !== 'gae') expect(row).not.toHaveProperty('value_loss');
    }
    expect(rows[0].kl).toBe(0); // iteration 0's actor is the reference (B = 0)

    const merged = join(root, `${family}-merged`);
    const { merged: changed } = mergePeftAdapter(model, adapter, merged);
    expect(changed.length).toBeGreaterThan(0);
    const base = logprobsOf(model, backend);
    const withAdapter = logprobsOf(model, backend, ['--adapter', adapter]);
    const fromMerged = logprobsOf(merged, backend);
    const diff = (x: number[], y: number[]) => Math.max(...x.map((v, i) => Math.abs(v - y[i])));
    console.log(
      `[hf-train] ${family} ${estimator} ${backend}: |merged − adapter| ${diff(fromMerged, withAdapter).toExponential(2)}, |adapter − base| ${diff(withAdapter, base).toExponential(2)}`,
    );
    expect(fromMerged.length).toBe(withAdapter.length);
    expect(diff(fromMerged, withAdapter)).toBeLessThanOrEqual(2e-3);
    // training moved the log-probs well past that tolerance
    expect(diff(withAdapter, base)).toBeGreaterThan(1e-2);
  });

  it('--task chat-arithmetic: chat-template prompts, held-out accuracy (greedy, and over 4 draws a prompt) before and after', async () => {
    const model = await folderWith('qwen3', 2);
    const out = join(root, 'task.jsonl');
    const args = ['--model', model, '--backend', 'cpu', '--task', 'chat-arithmetic', '--lora-rank', '2', '--iters', '1', '--batch', '2', '--max-new-tokens', '4'];
    const r = tsx('src/cli/train.ts', [...args, '--eval-count', '3', '--out', out, '--quiet']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain('task chat-arithmetic');
    const rows = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows.map((row) => Object.keys(row)[0])).toEqual(['eval_before', 'iter', 'eval']);
    for (const e of [rows[0].eval_before, rows[2].eval]) {
      expect(e.count).toBe(3);
      expect(e.greedy_accuracy).toBeGreaterThanOrEqual(0);
      expect(e.greedy_accuracy).toBeLessThanOrEqual(1);
      // over the default 4 draws of each of the 3 prompts
      expect(e.samples_per_prompt).toBe(4);
      expect(Number.isInteger(e.accuracy * 12)).toBe(true);
      expect(e.accuracy).toBeLessThanOrEqual(1);
      // the problems with and without a carry apart, their answers adding up to all of them
      const { greedy, sampled } = e.by_carry;
      expect(Object.values(greedy as Record<string, { count: number }>).reduce((n, g) => n + g.count, 0)).toBe(3);
      expect(Object.values(sampled as Record<string, { count: number }>).reduce((n, g) => n + g.count, 0)).toBe(12);
      expect(e.example.prompt).toMatch(/^What is \d+ \+ \d+\? Answer with the number\.$/);
    }
    const { prompts, reward } = files();
    const refused = (extra: string[], message: string) => {
      const bad = tsx('src/cli/train.ts', [...args, ...extra]);
      expect(bad.status, bad.stderr).toBe(2);
      expect(bad.stderr).toContain(message);
    };
    refused(['--prompts', prompts, '--reward-function', reward], '--task chat-arithmetic brings its own prompts and reward');
    refused(['--task', 'gsm8k'], '--task = "gsm8k": allowed with --model: chat-arithmetic, arithmetic, sentiment, stop');
    refused(['--eval-count', '5000'], '--eval-count = "5000": allowed: an integer from 0 to 1000');
    refused(['--eval-samples', '100'], '--eval-samples = "100": allowed: an integer from 0 to 64');
  });

  it('--task arithmetic on the playground’s own model as GPT-2: its prompts without a template, scored by its rule; greedy accuracy as the playground measures it', async () => {
    const model = join(root, 'arithmetic-gpt2');
    const sink = await nodeFolderSink(model);
    const checkpoint = new Uint8Array(readFileSync('public/checkpoints/arithmetic.safetensors'));
    for (const [name, bytes] of checkpointFolderFiles(checkpoint)) await sink.writeFile(name, bytes);
    const out = join(root, 'arithmetic.jsonl');
    const args = [
      '--model',
      model,
      '--backend',
      'cpu',
      '--task',
      'arithmetic',
      '--lora-rank',
      '2',
      '--iters',
      '1',
      '--batch',
      '2',
      '--samples-per-prompt',
      '2',
      '--max-new-tokens',
      '5',
    ];
    const r = tsx('src/cli/train.ts', [...args, '--eval-count', '16', '--eval-samples', '0', '--out', out, '--quiet']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain("the playground's task arithmetic");
    const rows = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows.map((row) => Object.keys(row)[0])).toEqual(['eval_before', 'iter', 'eval']);
    const before = rows[0].eval_before;
    expect(before).not.toHaveProperty('by_carry'); // the chat task's split only
    expect(before.example.prompt).toMatch(/^\d+[+-]\d+=$/);
    // the playground's own greedy evaluation of its model on the same 16 prompts
    const task = getTask('arithmetic');
    const { model: gpt } = modelFromCheckpoint(new CpuBackend(), checkpoint);
    const greedy = await greedySamples(gpt, task, taskTokenizer(task), 16, 5);
    expect(before.greedy_accuracy).toBe(greedy.filter((x) => task.ruleScore(x) >= 0.5).length / 16);
  });

  it('the whole run is planned before training: memory for the rollout but not the tape is refused naming --mini-batches', async () => {
    const model = await folderWith('qwen3', 2);
    const { prompts, reward } = files();
    const info = await openHfFolder(new NodeFolder(model));
    const tok = new HfTokenizer(info.tokenizerJson, info.tokenizerConfig, info.generation);
    const rollout = { batch: PROMPTS.length * 4, promptTokens: Math.max(...PROMPTS.map((p) => promptIds(tok, p, false).length)), responseTokens: 8 };
    const offer = { maxBufferSize: 2 ** 30, maxStorageBufferBindingSize: 2 ** 30, maxStorageBuffersPerShaderStage: 10, shaderF16: false };
    const plan = (trainBatch: number, rank: number | null) =>
      planMemory(
        info.arch,
        {
          ...rollout,
          trainBatch,
          lora: rank === null ? null : { rank, targets: plannedLoraTargets(info.arch, ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj']), roles: 1 },
          valueHead: false,
          weightDtype: 'f32',
        },
        offer,
      ).totalBytes;
    const loaded = plan(0, null);
    const training = plan(rollout.batch, 2);
    expect(training).toBeGreaterThan(loaded * 1.05);
    const gib = (loaded + training) / 2 / 2 ** 30;
    const r = tsx('src/cli/train.ts', [
      '--model',
      model,
      '--prompts',
      prompts,
      '--reward-function',
      reward,
      '--lora-rank',
      '2',
      '--iters',
      '1',
      '--max-new-tokens',
      '8',
      '--gpu-memory',
      gib.toPrecision(12),
    ]);
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/more --mini-batches keeps a smaller tape/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('bad flags are refused in one line naming the flag, exit status 2', async () => {
    const model = await folderWith('gpt2', 1);
    const { prompts, reward } = files();
    const bad = join(root, 'bad.js');
    writeFileSync(bad, '(prompt, response) => {');
    const empty = join(root, 'empty.txt');
    writeFileSync(empty, '\n \n');
    const base = ['--model', model, '--backend', 'cpu', '--prompts', prompts, '--reward-function', reward, '--lora-rank', '2', '--iters', '1'];
    const refused = (args: string[], message: string | RegExp) => {
      const r = tsx('src/cli/train.ts', args);
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).not.toMatch(/\n\s+at /); // no stack
    };
    refused(
      base.filter((a, i) => a !== '--lora-rank' && base[i - 1] !== '--lora-rank'),
      '--lora-rank is required',
    );
    refused([...base, '--lora-targets', 'q_proj'], /--lora-targets: .*q_proj is not a module of a gpt2 model \(allowed: c_attn, c_proj, c_fc\)/);
    refused([...base, '--estimator', 'ppo'], '--estimator = "ppo": allowed: gae, ');
    refused([...base, '--estimator', 'grpo_typo'], '--estimator = "grpo_typo"');
    refused([...base, '--samples-per-prompt', '1'], '--samples-per-prompt = 1: the group_norm estimator');
    refused([...base, '--lora-rank', '0'], '--lora-rank = "0": allowed: an integer from 1 to 1024');
    refused([...base, '--mini-batches', '3'], '--mini-batches: miniBatches = 3: the batch of 20 responses does not split into 3 equal minibatches');
    refused(['--model', model, '--backend', 'cpu', '--prompts', empty, '--reward-function', reward, '--lora-rank', '2'], '--prompts: ');
    refused(['--model', model, '--backend', 'cpu', '--prompts', prompts, '--reward-function', bad, '--lora-rank', '2'], '--reward-function: ');
    refused(['--model', join(root, 'nowhere'), '--prompts', prompts, '--reward-function', reward, '--lora-rank', '2'], '--model: no folder at');
  });
});
