// A Hugging Face folder run on the ops (src/model/hf/hfModel.ts) against the float64 oracle
// (src/reference/hf/forward.ts) for every family: fresh synthetic folders each run (new random
// weights from TEST_SEED), F32 and BF16, one file and shards, GPT-2 with and without the
// `transformer.` prefix, tied and separate heads. Each runs on the float64 backend, on WebGPU with
// the kernels this adapter takes (SwiftShader: the CPU-adapter variants) and, one case a family, on
// WebGPU with the kernels a GPU adapter takes.
//
// - Response log-probs of a batch of two (prompt, response) pairs of different lengths (left-padded
//   prompts, right-padded responses) against responseLogprobsRef of each pair alone. Tolerances:
//   f32 weights on WebGPU |Δ| ≤ 1e-4 (the issue asks 2e-3; the worst seen was 8.5e-6), on the CPU
//   backend 1e-9 (float64 throughout); f16 weights 3e-2 on both (the weights themselves are rounded
//   to float16; worst seen 8.2e-3, from F32 folders — BF16 values mostly fit float16 exactly).
//   Each case prints its worst error (`[precision]` lines).
// - Greedy generation equals the oracle's argmax continuation, compared while the oracle's top two
//   logits differ by more than 1e-3 (past a near tie the f32 model may rightly pick the other).
// - KV-cached sampling (prefill + one row a step) gives each drawn token the log-prob a full
//   recompute of the finished sequences gives: 2e-5 on WebGPU, 1e-9 on the CPU backend.
import { describe, expect, it } from 'vitest';
import type { Backend } from '../../src/backend/backend.ts';
import { WebGpuBackend } from '../../src/backend/webgpu/webgpuBackend.ts';
import { GpuRuntime } from '../../src/gpu/runtime.ts';
import { generate } from '../../src/model/hf/hfGenerate.ts';
import { HfModel } from '../../src/model/hf/hfModel.ts';
import { openHfFolder } from '../../src/model/hf/open.ts';
import { loadReferenceWeights } from '../../src/model/hf/referenceWeights.ts';
import { responseLogprobs } from '../../src/model/hf/scoring.ts';
import { type SyntheticSpec, synthesizeToMemory } from '../../src/model/hf/synthetic.ts';
import { responseLogprobsRef } from '../../src/reference/hf/forward.ts';
import { BACKENDS, webgpuBackend } from '../helpers/backends.ts';
import { referenceGreedy } from '../helpers/hfGreedy.ts';
import { expectClose, rng } from '../helpers/random.ts';

const CASES: { name: string; spec: Omit<SyntheticSpec, 'seed'> }[] = [
  { name: 'llama F32', spec: { family: 'llama', dtype: 'F32', shards: 1 } },
  { name: 'llama BF16 sharded, tied', spec: { family: 'llama', dtype: 'BF16', shards: 2, tied: true } },
  { name: 'llama3 rope scaling F32', spec: { family: 'llama3', dtype: 'F32', shards: 2 } },
  { name: 'qwen2 BF16', spec: { family: 'qwen2', dtype: 'BF16', shards: 1 } },
  { name: 'qwen2 F32 sharded', spec: { family: 'qwen2', dtype: 'F32', shards: 3 } },
  { name: 'qwen3 F32', spec: { family: 'qwen3', dtype: 'F32', shards: 1 } },
  { name: 'qwen3 BF16 sharded, separate head', spec: { family: 'qwen3', dtype: 'BF16', shards: 2, tied: false } },
  { name: 'gpt2 F32 transformer.', spec: { family: 'gpt2', dtype: 'F32', shards: 1 } },
  { name: 'gpt2 BF16 sharded, bare keys', spec: { family: 'gpt2', dtype: 'BF16', shards: 2, gpt2Prefix: false } },
];

const PROMPTS = [
  [5, 9, 33, 40, 7],
  [17, 300],
];

function randomIds(r: ReturnType<typeof rng>, n: number, V: number): number[] {
  return Array.from({ length: n }, () => r.nextU32() % V);
}

let gpuKernels: Promise<WebGpuBackend> | null = null;
/** A second runtime on the Dawn device that takes the kernels a GPU adapter gets (tiled linear, workgroup norms, 64-thread decode). */
function gpuKernelsBackend(): Promise<WebGpuBackend> {
  gpuKernels ??= webgpuBackend().then((base) => {
    const rt = new GpuRuntime(base.rt.device, base.rt.adapterName);
    rt.cpuAdapter = false;
    return new WebGpuBackend(rt);
  });
  return gpuKernels;
}

const MODEL_BACKENDS: [string, () => Promise<Backend>][] = [...BACKENDS, ['webgpu, GPU kernels', gpuKernelsBackend]];

describe.each(MODEL_BACKENDS)('HfModel on %s', (backendName, makeBackend) => {
  const gpuBackend = backendName.startsWith('webgpu');
  // SwiftShader runs the GPU kernels slowly: one case of each family there.
  const cases = backendName === 'webgpu, GPU kernels' ? CASES.filter((c, i) => CASES.findIndex((d) => d.spec.family === c.spec.family) === i) : CASES;

  describe.each(cases)('$name', ({ name, spec }) => {
    const salt = CASES.findIndex((c) => c.name === name);

    it('scores a padded batch of responses as the float64 forward does, with f32 and f16 weights', async () => {
      const be: Backend = await makeBackend();
      const r = rng(3100 + salt);
      const folder = await synthesizeToMemory({ ...spec, seed: r.nextU32() });
      const info = await openHfFolder(folder);
      const ref = await loadReferenceWeights(folder, info);
      const V = info.arch.vocab;
      const prompts = [randomIds(r, 5, V), randomIds(r, 2, V)];
      const responses = [randomIds(r, 3, V), randomIds(r, 5, V)];
      const expected = prompts.map((p, b) => Array.from(responseLogprobsRef(info.arch, ref, p, responses[b]).logprobs));
      for (const dtype of ['f32', 'f16'] as const) {
        const model = await HfModel.load(be, folder, info, dtype);
        try {
          const got = await responseLogprobs(model, prompts, responses);
          const atol = dtype === 'f16' ? 3e-2 : gpuBackend ? 1e-4 : 1e-9;
          for (let b = 0; b < 2; b++) expectClose(got.logprobs[b], expected[b], 0, atol, `${dtype} weights, row ${b} logprobs`);
          const worst = Math.max(...expected.flatMap((row, b) => row.map((x, j) => Math.abs(x - got.logprobs[b][j]))));
          console.log(`[precision] ${backendName} ${name} ${dtype} weights: max |logprob − float64| ${worst.toExponential(2)}`);
          // entropy is a proper one: in (0, log V]
          for (const row of got.entropy) for (const e of row) expect(e > 0 && e <= Math.log(V) + 1e-4).toBe(true);
        } finally {
          model.dispose();
        }
      }
    });

    it('greedy generation is the oracle argmax continuation; cached sampling matches a full recompute', async () => {
      const be: Backend = await makeBackend();
      const r = rng(3200 + salt);
      const folder = await synthesizeToMemory({ ...spec, seed: r.nextU32() });
      const info = await openHfFolder(folder);
      const ref = await loadReferenceWeights(folder, info);
      const eos = info.generation.eosTokenIds;
      const model = await HfModel.load(be, folder, info, 'f32');
      try {
        const base = { maxNewTokens: 6, temperature: 1, topP: 1, topK: 0, seed: r.nextU32(), eosIds: eos, padId: 0 };
        const greedy = await generate(model, PROMPTS, { ...base, greedy: true });
        PROMPTS.forEach((p, b) => {
          const want = referenceGreedy(info.arch, ref, p, 6, eos);
          const n = want.tokens.length;
          expect(greedy.tokens[b].slice(0, n), `row ${b} greedy tokens`).toEqual(want.tokens);
          if (want.tiedAt === null) expect(greedy.tokens[b]).toEqual(want.tokens);
          expect(greedy.logprobs[b].every((x) => x === 0)).toBe(true); // top-k 1 keeps one token: log 1
        });

        const sampled = await generate(model, PROMPTS, { ...base, greedy: false });
        const full = await responseLogprobs(model, PROMPTS, sampled.tokens);
        sampled.tokens.forEach((t, b) => {
          expect(t.length).toBeGreaterThan(0);
          expect(sampled.finished[b]).toBe(eos.includes(t[t.length - 1]));
          expectClose(sampled.logprobs[b], full.logprobs[b], 0, gpuBackend ? 2e-5 : 1e-9, `row ${b}: cached decode vs full recompute`);
          expectClose(sampled.logprobs[b], responseLogprobsRef(info.arch, ref, PROMPTS[b], t).logprobs, 0, gpuBackend ? 1e-4 : 1e-9, `row ${b}: cached decode vs float64`);
        });
      } finally {
        model.dispose();
      }
    });
  });

  it('splits the embedding and the head into row parts when one binding cannot hold them', async () => {
    const be: Backend = await makeBackend();
    const r = rng(3500);
    for (const spec of [
      { family: 'qwen3', dtype: 'F32', shards: 1, tied: true },
      { family: 'llama', dtype: 'BF16', shards: 2, tied: false },
    ] as const) {
      const folder = await synthesizeToMemory({ ...spec, seed: r.nextU32() });
      const info = await openHfFolder(folder);
      const ref = await loadReferenceWeights(folder, info);
      const V = info.arch.vocab;
      const prompts = [randomIds(r, 4, V), randomIds(r, 3, V)];
      const responses = [randomIds(r, 4, V), randomIds(r, 2, V)];
      for (const dtype of ['f32', 'f16'] as const) {
        // 40 000 bytes: 156 rows of 64 f32 (3 parts of 384), 312 rows of 64 f16 (2 parts)
        const model = await HfModel.load(be, folder, info, dtype, { maxTableBytes: 40_000 });
        try {
          expect(model.weights.embed.map((t) => t.shape[0])).toEqual(dtype === 'f32' ? [156, 156, 72] : [312, 72]);
          expect(model.weights.head.map((t) => t.shape[0])).toEqual([156, 156, 72]);
          const got = await responseLogprobs(model, prompts, responses);
          const atol = dtype === 'f16' ? 3e-2 : gpuBackend ? 1e-4 : 1e-9;
          prompts.forEach((p, b) => {
            expectClose(got.logprobs[b], responseLogprobsRef(info.arch, ref, p, responses[b]).logprobs, 0, atol, `${spec.family} ${dtype} split tables, row ${b}`);
          });
        } finally {
          model.dispose();
        }
      }
    }
  });

  it('refuses a prompt with no token and ids outside the vocabulary, by name', async () => {
    const be: Backend = await makeBackend();
    const folder = await synthesizeToMemory({ family: 'qwen3', dtype: 'F32', shards: 1, seed: 1 });
    const info = await openHfFolder(folder);
    const model = await HfModel.load(be, folder, info, 'f32');
    try {
      await expect(responseLogprobs(model, [[]], [[1]])).rejects.toThrow('prompt 0 holds no token');
      await expect(responseLogprobs(model, [[1]], [[info.arch.vocab]])).rejects.toThrow(`token id ${info.arch.vocab} is outside [0, ${info.arch.vocab})`);
      const opts = { maxNewTokens: 2, greedy: true, temperature: 1, topP: 1, topK: 0, seed: 0, eosIds: [], padId: 0 };
      await expect(generate(model, [[1]], { ...opts, maxNewTokens: 0 })).rejects.toThrow('maxNewTokens must be a positive integer, got 0');
      await expect(generate(model, [[1]], { ...opts, maxNewTokens: info.arch.maxPositions })).rejects.toThrow(/positions exceed the model's max_position_embeddings/);
    } finally {
      model.dispose();
    }
  });
});
