// One sampling step for every row over a large vocabulary (up to Qwen's 151 936 ids), in place:
// temperature, top-k (k ≤ 64), top-p, several EOS ids, PAD after a row finishes, and the drawn
// token's log-prob under the distribution actually sampled from. The contract of the character
// model's sampleStep (src/backend/seqOps.ts) with a vocabulary limited only by a storage binding
// (B ≤ 64 rows of 151 936 f32 logits are 39 MB) and a list of EOS ids.
// Math: shaders/sample_vocab.wgsl; float64 reference: src/reference/seq/sampleVocab.ts.
import { expectDType, expectShape, type Tensor } from '../backend/tensor.ts';
import { cpu } from '../backend/cpu/cpuTensor.ts';
import { gpu } from '../backend/webgpu/gpuTensor.ts';
import { kernel } from '../gpu/pipelines.ts';
import { uniformLayout } from '../gpu/uniforms.ts';
import { sampleVocabStepRef, type VocabSampleParams } from '../reference/seq/sampleVocab.ts';
import { benchInputs, randomTensor } from './benchInputs.ts';
import { defineOp, type Op } from './op.ts';

export type { VocabSampleParams } from '../reference/seq/sampleVocab.ts';

export interface SampleVocabArgs {
  logits: Tensor; // (B, V) f32, the head's logits for position `pos`
  sequences: Tensor; // (B, S) i32, in place: column pos ← the token (PAD once finished)
  attnMask: Tensor; // (B, S) f32, in place: column pos ← 1 (0 once finished)
  positions: Tensor; // (B, S) i32, in place: column pos ← positions[b, pos − 1] + 1 (0 at pos 0 or once finished)
  finished: Tensor; // (B) i32, in place: 1 once a row drew an EOS id
  pos: number; // the column written
  params: VocabSampleParams;
  logprobs?: Tensor | null; // (B, S) f32: column pos ← log p(token) under the kept distribution, 0 once finished
}

/** The most tokens top-k keeps (the kernel gathers them in workgroup memory). */
export const SAMPLE_VOCAB_MAX_K = 64;
/** The most EOS ids a step checks (uniform slots). */
export const SAMPLE_VOCAB_MAX_EOS = 8;

const UNIFORM = uniformLayout('Params', {
  V: 'u32',
  S: 'u32',
  pos: 'u32',
  top_k: 'u32',
  top_p: 'f32',
  temperature: 'f32',
  seed: 'u32',
  pad: 'i32',
  has_logprobs: 'u32',
  n_eos: 'u32',
  eos0: 'i32',
  eos1: 'i32',
  eos2: 'i32',
  eos3: 'i32',
  eos4: 'i32',
  eos5: 'i32',
  eos6: 'i32',
  eos7: 'i32',
});
const STORAGE = ['read', 'rw', 'rw', 'rw', 'rw', 'rw'] as const;
// A workgroup per row: 256 threads on a GPU; 4 on a CPU implementation of WebGPU (one SIMD group:
// its build time grows with workgroup memory, and more threads there only add coroutine switches;
// 1.09 s against 1.33 s with 64 at V = 32 768 on SwiftShader) for vocabularies up to
// SAMPLE_VOCAB_CPU_MAX_V. Past it CPU adapters take the 256 threads too: Mesa's llvmpipe (lavapipe,
// wgpu's software Vulkan) ends the loops of an invocation after 65 535 iterations in all
// (LP_MAX_TGSI_LOOP_ITERATIONS, shared by every loop of a shader) and the row's thread then writes
// a wrong token; a thread walks its ⌈V/WG⌉ ids up to 40 times (32 bisection passes for top-k or
// top-p, the max, the masses, the draw) plus ~170 short loops, so 4 threads stay under it only up
// to ~6 400 ids (6 144 keeps a margin).
const SAMPLE_GPU = kernel({ shader: 'sample_vocab', entry: 'sample_vocab', uniform: UNIFORM, storage: STORAGE, constants: { WG: 256, GS: 16 } });
const SAMPLE_CPU = kernel({ shader: 'sample_vocab', entry: 'sample_vocab', uniform: UNIFORM, storage: STORAGE, constants: { WG: 4, GS: 2 } }, 'cpu');
/** The largest vocabulary a CPU adapter samples with 4 threads a row: 40 walks of ⌈V/4⌉ ids and the short loops, 61 600 iterations at most. */
export const SAMPLE_VOCAB_CPU_MAX_V = 6144;

function checkSample(a: SampleVocabArgs): void {
  if (a.logits.shape.length !== 2 || a.logits.shape[1] < 1) throw new Error(`logits: expected (B, V) with V ≥ 1, got [${a.logits.shape.join(', ')}]`);
  const [B, V] = a.logits.shape;
  if (B > 65535) throw new Error(`logits: ${B} rows exceed one workgroup per row (at most 65535)`);
  if (a.sequences.shape.length !== 2) throw new Error(`sequences: expected (B, S), got [${a.sequences.shape.join(', ')}]`);
  const S = a.sequences.shape[1];
  for (const [name, t, dtype] of [
    ['sequences', a.sequences, 'i32'],
    ['attnMask', a.attnMask, 'f32'],
    ['positions', a.positions, 'i32'],
  ] as const) {
    expectShape(name, t, [B, S]);
    expectDType(name, t, dtype);
  }
  expectDType('logits', a.logits, 'f32');
  expectShape('finished', a.finished, [B]);
  expectDType('finished', a.finished, 'i32');
  if (a.logprobs) {
    expectShape('logprobs', a.logprobs, [B, S]);
    expectDType('logprobs', a.logprobs, 'f32');
  }
  if (!Number.isInteger(a.pos) || a.pos < 0 || a.pos >= S) throw new Error(`pos ${a.pos} outside [0, ${S})`);
  const p = a.params;
  if (!(Number.isFinite(p.temperature) && p.temperature > 0)) throw new Error(`temperature must be a finite number > 0, got ${p.temperature}`);
  if (!(p.topP > 0 && p.topP <= 1)) throw new Error(`topP must be in (0, 1], got ${p.topP}`);
  if (!Number.isInteger(p.topK) || p.topK < 0) throw new Error(`topK must be a non-negative integer, got ${p.topK}`);
  if (p.topK > SAMPLE_VOCAB_MAX_K && p.topK < V) throw new Error(`topK ${p.topK} exceeds the sampler's ${SAMPLE_VOCAB_MAX_K} (0 or ≥ V = ${V} keeps every token)`);
  if (!Number.isInteger(p.seed) || p.seed < 0 || p.seed > 0xffffffff) throw new Error(`seed must be an integer in [0, 2^32), got ${p.seed}`);
  if (p.eosIds.length > SAMPLE_VOCAB_MAX_EOS) throw new Error(`eosIds: ${p.eosIds.length} ids exceed the sampler's ${SAMPLE_VOCAB_MAX_EOS}`);
  for (const id of [...p.eosIds, p.padId]) if (!Number.isInteger(id) || Math.abs(id) >= 2 ** 31) throw new Error(`token ids must be 32-bit integers, got ${id}`);
}

/** Draws column `pos` of every row (see SampleVocabArgs), in place; returns nothing. */
export const sampleVocab: Op<SampleVocabArgs, void> = defineOp({
  name: 'sampleVocab',
  kernels: [SAMPLE_GPU, SAMPLE_CPU],
  check: checkSample,
  cpu(a) {
    const [B, V] = a.logits.shape;
    const S = a.sequences.shape[1];
    const lp = a.logprobs ? cpu(a.logprobs).data : null;
    sampleVocabStepRef(cpu(a.logits).data, cpu(a.sequences).data, cpu(a.attnMask).data, cpu(a.positions).data, cpu(a.finished).data, { B, V, S }, a.pos, a.params, lp);
  },
  webgpu(a, be) {
    const [B, V] = a.logits.shape;
    if (B === 0) return;
    const p = a.params;
    const eos = Array.from({ length: SAMPLE_VOCAB_MAX_EOS }, (_, i) => p.eosIds[i] ?? -1);
    const u = {
      V,
      S: a.sequences.shape[1],
      pos: a.pos,
      top_k: p.topK,
      top_p: p.topP,
      temperature: p.temperature,
      seed: p.seed,
      pad: p.padId,
      has_logprobs: a.logprobs ? 1 : 0,
      n_eos: p.eosIds.length,
      eos0: eos[0],
      eos1: eos[1],
      eos2: eos[2],
      eos3: eos[3],
      eos4: eos[4],
      eos5: eos[5],
      eos6: eos[6],
      eos7: eos[7],
    };
    // Without a logprobs tensor the kernel writes nothing there; a one-element scratch fills the binding.
    const lp = a.logprobs ?? be.empty([1]);
    const bufs = [gpu(a.logits), gpu(a.finished), gpu(a.sequences), gpu(a.attnMask), gpu(a.positions), gpu(lp)];
    be.rt.dispatch(be.rt.cpuAdapter && V <= SAMPLE_VOCAB_CPU_MAX_V ? SAMPLE_CPU : SAMPLE_GPU, bufs, u, [B]);
    if (lp !== a.logprobs) be.dispose(lp);
  },
  bench: {
    // Qwen3's generation_config (T 0.6, top-k 20, top-p 0.95) over 32 768 ids, the batch's B rows.
    label: 'sampleVocab (V 32768, top-k 20, top-p 0.95)',
    run(be, x) {
      const B = x.mask.shape[0];
      const a = benchInputs(be, `sample-${B}`, (be, r) => {
        const S = 4;
        return {
          logits: randomTensor(be, r, [B, 32768], 3),
          sequences: be.zeros([B, S], 'i32'),
          attnMask: be.zeros([B, S]),
          positions: be.zeros([B, S], 'i32'),
          finished: be.zeros([B], 'i32'),
          logprobs: be.zeros([B, S]),
          pos: 1,
          params: { temperature: 0.6, topK: 20, topP: 0.95, seed: 5, eosIds: [], padId: 0 },
        };
      });
      sampleVocab(be, a);
    },
  },
});
