// npm run bench -- --only hf [--shapes reduced|real|all|NAME,…] (this file's generation rows, then hfRl.ts's RL rows)
// Hugging Face models with random weights at real shapes (SmolLM2-135M, Qwen3-0.6B) and a reduced
// one (2 layers at SmolLM2's widths, a 4 096-token vocabulary), built on the device in the layout
// a folder would get (randomWeights.ts), f16 dense weights and embedding. Each row: bytes on the
// device (the pool's tensor bytes after building, beside the memory plan's count), prefill and
// decode tokens/s through the generation path (hfGenerate.ts: KV-cached extend, LM head, on-device
// sampling), FLOPs per token from the shape and the GFLOP/s they imply.
//   prefill: B·P prompt tokens / the time from generate()'s start to its first token sampled on the GPU
//   decode:  B·(N − 1) tokens / the time of the N − 1 steps after that (medians over repeats)
// A software adapter (SwiftShader, llvmpipe) runs only the reduced shape unless --shapes asks for
// more; a shape whose memory plan does not fit the adapter is named with the plan's verdict.
import type { Backend } from '../backend/backend.ts';
import type { WebGpuBackend } from '../backend/webgpu/webgpuBackend.ts';
import { type HfArch, parameterCount } from '../model/hf/arch.ts';
import { maxBindingBytes } from '../model/hf/deviceWeights.ts';
import { generate } from '../model/hf/hfGenerate.ts';
import { HfModel } from '../model/hf/hfModel.ts';
import { planLoad } from '../model/hf/loadPlan.ts';
import { formatBytes } from '../model/hf/memoryPlan.ts';
import { randomDeviceWeights } from '../model/hf/randomWeights.ts';
import { describeSynthetic, REAL_SHAPES, type SyntheticDims, type SyntheticFamily } from '../model/hf/synthetic.ts';
import type { WeightDType } from '../model/hf/weightLayout.ts';
import { Rng } from '../util/rng.ts';
import { settle, table } from './timing.ts';

export interface HfBenchShape {
  name: string;
  family: SyntheticFamily;
  tied: boolean;
  dims: SyntheticDims;
  /** Sequences generated together, prompt tokens each, new tokens each. */
  batch: number;
  prompt: number;
  decode: number;
  real: boolean;
  /** The RL rows' batch (hfRl.ts); none: no RL rows at this shape. */
  rl?: HfRlSizes;
}

/** One RL iteration's batch (hfRl.ts): `prompts` × `samples` responses of `newTokens` after `prompt` tokens. */
export interface HfRlSizes {
  prompts: number;
  samples: number;
  prompt: number;
  newTokens: number;
  /** Why these sizes are smaller than the 8 × 4, 48 + 64 (a software adapter), if they are. */
  reduced?: string;
}

/** The RL batch: 8 prompts × 4 samples, 48-token prompts, 64 new tokens. */
const RL_REAL: HfRlSizes = { prompts: 8, samples: 4, prompt: 48, newTokens: 64 };

const SMOL = REAL_SHAPES['smollm2-135m'];
const QWEN = REAL_SHAPES['qwen3-0.6b'];

export const HF_BENCH_SHAPES: HfBenchShape[] = [
  {
    name: 'reduced (SmolLM2 widths, 2 layers, V 4096)',
    family: 'llama',
    tied: true,
    dims: { ...SMOL.dims, nLayer: 2, vocab: 4096 },
    batch: 4,
    prompt: 32,
    decode: 5,
    real: false,
    rl: { prompts: 2, samples: 4, prompt: 16, newTokens: 8, reduced: 'reduced for SwiftShader' },
  },
  { name: 'smollm2-135m', family: SMOL.family, tied: SMOL.tied, dims: SMOL.dims, batch: 32, prompt: 64, decode: 33, real: true, rl: RL_REAL },
  { name: 'qwen3-0.6b', family: QWEN.family, tied: QWEN.tied, dims: QWEN.dims, batch: 32, prompt: 64, decode: 33, real: true, rl: RL_REAL },
];

export function shapeArch(s: Pick<HfBenchShape, 'family' | 'tied' | 'dims'>): HfArch {
  const arch = describeSynthetic({ family: s.family, dtype: 'BF16', shards: 1, seed: 0, dims: s.dims, tied: s.tied }).arch;
  if (!arch) throw new Error(`bench shape ${s.family}: its config does not parse`);
  return arch;
}

/**
 * Forward FLOPs of one token that attends to `context` positions (itself included): 2·in·out per
 * projection (q, k, v, o, the MLP's gate/up/down), 4·heads·headDim·context for the scores and the
 * weighted sum of values, and 2·D·V when its logits are computed. Norms, rope, softmax and the
 * activation are O(D) and left out.
 */
export function tokenFlops(a: HfArch, context: number, logits: boolean): number {
  const D = a.dModel;
  const qOut = a.nHead * a.headDim;
  const kvOut = a.nKvHead * a.headDim;
  const proj = 2 * D * (qOut + 2 * kvOut) + 2 * qOut * D + (a.mlp === 'gated' ? 3 : 2) * 2 * D * a.dFf;
  return a.nLayer * (proj + 4 * a.nHead * a.headDim * context) + (logits ? 2 * D * a.vocab : 0);
}

/** FLOPs of prefilling B prompts of P tokens (causal: position p attends to p + 1) and the logits of each last token. */
export function prefillFlops(a: HfArch, B: number, P: number): number {
  let perRow = 0;
  for (let p = 0; p < P; p++) perRow += tokenFlops(a, p + 1, p === P - 1);
  return B * perRow;
}

/** FLOPs of decode steps 2 … N of B rows after a P-token prompt (step t attends to P + t − 1 positions; each computes logits). */
export function decodeFlops(a: HfArch, B: number, P: number, N: number): number {
  let perRow = 0;
  for (let t = 2; t <= N; t++) perRow += tokenFlops(a, P + t - 1, true);
  return B * perRow;
}

export interface HfBenchRow {
  shape: string;
  params: number;
  weights: WeightDType;
  batch: number;
  prompt: number;
  decode: number;
  /** Tensor bytes the pool handed out while building the model (weights + rope table), and the plan's count. */
  deviceBytes: number;
  planBytes: number;
  prefillMs: number;
  prefillTokensPerS: number;
  prefillFlopsPerToken: number;
  prefillGflops: number;
  decodeMsPerStep: number;
  decodeTokensPerS: number;
  decodeFlopsPerToken: number;
  decodeGflops: number;
}

export interface HfBenchOptions {
  repeats: number;
  dtype?: WeightDType;
  seed?: number;
}

/** Builds `s` with random weights on `be` and times prefill and decode; the plan's verdict instead when it does not fit. */
export async function benchHfShape(be: WebGpuBackend, s: HfBenchShape, opts: HfBenchOptions): Promise<HfBenchRow | { shape: string; skipped: string }> {
  const a = shapeArch(s);
  const dtype = opts.dtype ?? 'f16';
  const plan = planLoad(be, a, dtype, { batch: s.batch, promptTokens: s.prompt, responseTokens: s.decode });
  if (!plan) throw new Error('the hf bench runs on WebGPU');
  if (!plan.fits) return { shape: s.name, skipped: plan.message };
  await settle(be);
  const before = be.rt.memory().tensorBytes;
  const model = HfModel.fromWeights(be, a, randomDeviceWeights(be, a, dtype, opts.seed ?? 7, maxBindingBytes(be)));
  await settle(be);
  const deviceBytes = be.rt.memory().tensorBytes - before;
  try {
    const r = new Rng(opts.seed ?? 7);
    const prompts = Array.from({ length: s.batch }, () => Array.from({ length: s.prompt }, () => r.int(0, a.vocab)));
    const prefillMs: number[] = [];
    const decodeMs: number[] = [];
    for (let i = 0; i < 1 + opts.repeats; i++) {
      await settle(be);
      const t0 = performance.now();
      let t1 = t0;
      await generate(model, prompts, {
        maxNewTokens: s.decode,
        greedy: true,
        temperature: 1,
        topP: 1,
        topK: 0,
        seed: 1,
        eosIds: [],
        padId: 0,
        afterPrefill: async () => {
          await settle(be);
          t1 = performance.now();
        },
      });
      await settle(be);
      if (i === 0) continue; // warm-up: pipelines compiled, pool filled
      prefillMs.push(t1 - t0);
      decodeMs.push(performance.now() - t1);
    }
    const prefill = median(prefillMs);
    const decode = median(decodeMs);
    const pf = prefillFlops(a, s.batch, s.prompt);
    const df = decodeFlops(a, s.batch, s.prompt, s.decode);
    const decodeTokens = s.batch * (s.decode - 1);
    return {
      shape: s.name,
      params: parameterCount(a),
      weights: dtype,
      batch: s.batch,
      prompt: s.prompt,
      decode: s.decode,
      deviceBytes,
      planBytes: plan.items[0].bytes,
      prefillMs: prefill,
      prefillTokensPerS: (s.batch * s.prompt) / (prefill / 1000),
      prefillFlopsPerToken: pf / (s.batch * s.prompt),
      prefillGflops: pf / (prefill / 1000) / 1e9,
      decodeMsPerStep: decode / (s.decode - 1),
      decodeTokensPerS: decodeTokens / (decode / 1000),
      decodeFlopsPerToken: df / decodeTokens,
      decodeGflops: df / (decode / 1000) / 1e9,
    };
  } finally {
    model.dispose();
    await settle(be);
  }
}

const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];

/** The shapes `--shapes` names (reduced, real, all or names), or by default the reduced one on a software adapter and all on a GPU. */
export function selectHfShapes(flag: string | undefined, softwareAdapter: boolean): { shapes: HfBenchShape[]; note: string } {
  if (flag === undefined) {
    return softwareAdapter
      ? { shapes: HF_BENCH_SHAPES.filter((s) => !s.real), note: 'software adapter: only the reduced shape (pass --shapes real or all to run the real ones; far too slow here)' }
      : { shapes: HF_BENCH_SHAPES, note: 'every shape' };
  }
  const pick = (w: string) =>
    w === 'reduced' ? HF_BENCH_SHAPES.filter((s) => !s.real) : w === 'real' ? HF_BENCH_SHAPES.filter((s) => s.real) : HF_BENCH_SHAPES.filter((s) => s.name === w);
  const shapes = flag === 'all' ? HF_BENCH_SHAPES : [...new Set(flag.split(',').flatMap(pick))];
  if (shapes.length === 0)
    throw new Error(
      `--shapes must be reduced, real, all or names among ${HF_BENCH_SHAPES.filter((s) => s.real)
        .map((s) => s.name)
        .join(', ')}, got ${flag}`,
    );
  return { shapes, note: `--shapes ${flag}` };
}

export async function printHfBench(gpuBe: Backend, _cpuBe: Backend, ctx: { repeats: number; hfShapes?: string }): Promise<(HfBenchRow | { shape: string; skipped: string })[]> {
  const be = gpuBe as WebGpuBackend;
  const { shapes, note } = selectHfShapes(ctx.hfShapes, be.rt.cpuAdapter);
  console.log(`## Hugging Face models, random weights, f16 dense weights (${note})\n`);
  const rows: (HfBenchRow | { shape: string; skipped: string })[] = [];
  for (const s of shapes) rows.push(await benchHfShape(be, s, { repeats: ctx.repeats }));
  const done = rows.filter((r): r is HfBenchRow => !('skipped' in r));
  console.log(
    table(
      [
        'shape',
        'B × (P + N)',
        'on device',
        'plan',
        'prefill tok/s',
        'prefill GFLOP/tok',
        'prefill GFLOP/s',
        'decode ms/step',
        'decode tok/s',
        'decode GFLOP/tok',
        'decode GFLOP/s',
      ],
      done.map((r) => [
        r.shape,
        `${r.batch} × (${r.prompt} + ${r.decode})`,
        formatBytes(r.deviceBytes),
        formatBytes(r.planBytes),
        r.prefillTokensPerS,
        r.prefillFlopsPerToken / 1e9,
        r.prefillGflops,
        r.decodeMsPerStep,
        r.decodeTokensPerS,
        r.decodeFlopsPerToken / 1e9,
        r.decodeGflops,
      ]),
    ),
  );
  for (const r of rows) if ('skipped' in r) console.log(`\n${r.shape}: not run. ${r.skipped}`);
  console.log('');
  return rows;
}
