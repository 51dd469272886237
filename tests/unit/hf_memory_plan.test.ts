// The memory plan: exact byte counts for the parts that have a closed form, splits of tables larger than
// one binding, and verdicts that say what is needed, what the GPU offers and what to lower.
import { describe, expect, it } from 'vitest';
import { parameterCount, type HfArch } from '../../src/model/hf/arch.ts';
import { parseHfConfig } from '../../src/model/hf/config.ts';
import { formatBytes, layerTapeTensors, layerTapeWords, loraShape, planMemory, type AdapterOffer, type RunShape } from '../../src/model/hf/memoryPlan.ts';
import { CpuBackend } from '../../src/backend/cpu/cpuBackend.ts';
import type { Tensor } from '../../src/backend/tensor.ts';
import { responseLogprobsTaped } from '../../src/model/hf/hfBackward.ts';
import { HfModel } from '../../src/model/hf/hfModel.ts';
import { newLoraTrainable } from '../../src/model/hf/loraParams.ts';
import { openHfFolder } from '../../src/model/hf/open.ts';
import { synthesizeToMemory } from '../../src/model/hf/synthetic.ts';
import { rng } from '../helpers/random.ts';
import { describeSynthetic, REAL_SHAPES } from '../../src/model/hf/synthetic.ts';

const DEFAULT_LIMITS = { maxBufferSize: 268435456, maxStorageBufferBindingSize: 134217728, maxStorageBuffersPerShaderStage: 8 };
const GiB = 2 ** 30;
/** The WebGPU backend's buffer for `bytes`: the next power of two, 256 bytes at least. */
const pow2 = (bytes: number) => Math.max(256, 2 ** Math.ceil(Math.log2(bytes)));

function real(name: keyof typeof REAL_SHAPES): HfArch {
  const s = REAL_SHAPES[name];
  return describeSynthetic({ family: s.family, dtype: 'BF16', shards: 1, seed: 0, dims: s.dims, tied: s.tied }).arch!;
}

const ISSUE_RUN: RunShape = { batch: 32, promptTokens: 48, responseTokens: 64, trainBatch: 8, lora: { rank: 8, targets: ['q', 'v'], roles: 2 }, valueHead: true };

describe('planMemory', () => {
  it('SmolLM2-135M: f16 weights in power-of-two buffers with an f32 copy of the tied head; the KV cache a k and a v a layer, each batch × tokens × kv heads × head_dim in its power-of-two buffer', () => {
    const a = real('smollm2-135m');
    const offer: AdapterOffer = { ...DEFAULT_LIMITS, shaderF16: true, memoryBytes: 8 * GiB };
    const p = planMemory(a, ISSUE_RUN, offer);
    expect(p.fits).toBe(true);
    expect(p.weightDtype).toBe('f16');
    // Per layer: 2 norms (576 f32), q and o (576×576 f16), k and v (192×576 f16), gate, up, down
    // (1536×576 f16), each in the pool's power-of-two buffer; then the f16 embedding (49 152×576),
    // its f32 copy as the head, the final norm and the (32, 2) i32 rope table.
    const layer = 2 * pow2(576 * 4) + 2 * pow2(576 * 576 * 2) + 2 * pow2(192 * 576 * 2) + 3 * pow2(1536 * 576 * 2);
    const f16Weights = 30 * layer + pow2(49152 * 576 * 2) + pow2(49152 * 576 * 4) + pow2(576 * 4) + pow2(32 * 2 * 4);
    expect(f16Weights).toBe(468963584);
    expect(p.items.find((i) => i.what === 'weights')!.bytes).toBe(f16Weights);
    expect(134515008).toBe(parameterCount(a));
    // 32 × 112 × 192 f32 = 2.6 MiB in a 4 MiB buffer
    expect(p.items.find((i) => i.what === 'kv cache')!.bytes).toBe(30 * 2 * pow2(3 * 64 * 112 * 32 * 4));
    expect(30 * 2 * pow2(3 * 64 * 112 * 32 * 4)).toBe(240 * 2 ** 20);
    // LoRA r 8 on q (576→576) and v (576→192), 30 layers: per layer A and B of q (8·576 each) and
    // of v (8·576, 192·8), every block a multiple of 64 already; the critic's flat buffer adds the
    // value head (576, then the bias in a block of 64). Per role 8 buffers (w, grad, m, v, decay
    // mask, and the NaN guard's copies of w, m, v), each in the pool's power-of-two buffer.
    const actor = 30 * (8 * 576 + 576 * 8 + 8 * 576 + 192 * 8);
    const critic = actor + 576 + 64;
    expect([actor, critic]).toEqual([460800, 461440]);
    expect(p.items.find((i) => i.what === 'adapters')!.bytes).toBe(8 * (pow2(actor * 4) + pow2(critic * 4)));
    expect(8 * (pow2(actor * 4) + pow2(critic * 4))).toBe(32 * 2 ** 20);
    // without the guard (the bench times the iteration alone) five buffers a role
    expect(planMemory(a, { ...ISSUE_RUN, nanGuard: false }, offer).items.find((i) => i.what === 'adapters')!.bytes).toBe(5 * (pow2(actor * 4) + pow2(critic * 4)));
    expect(p.splits).toEqual([]);
    expect(p.message).toMatch(/^Fits: this run needs [\d.]+ (GiB|MiB) \(weights 447\.2 MiB in f16\); the GPU offers 8\.00 GiB\.$/);
    // without shader-f16 the dense weights double and the head is the embedding itself
    const f32Layer = 2 * pow2(576 * 4) + 2 * pow2(576 * 576 * 4) + 2 * pow2(192 * 576 * 4) + 3 * pow2(1536 * 576 * 4);
    const f32Weights = 30 * f32Layer + pow2(49152 * 576 * 4) + pow2(576 * 4) + pow2(32 * 2 * 4);
    expect(planMemory(a, ISSUE_RUN, { ...offer, shaderF16: false }).items[0].bytes).toBe(f32Weights);
  });

  it('Qwen3-0.6B: the 151 936-row embedding is split by rows to fit 128 MiB bindings (3 parts in f16, 5 in f32, as is the f32 head)', () => {
    const a = real('qwen3-0.6b');
    const f16 = planMemory(a, { ...ISSUE_RUN, lora: null, trainBatch: 0, valueHead: false }, { ...DEFAULT_LIMITS, shaderF16: true });
    expect(f16.splits).toEqual([
      { name: 'embedding', bytes: 151936 * 1024 * 2, parts: 3, rowsPerPart: 65536 },
      { name: 'lm head', bytes: 151936 * 1024 * 4, parts: 5, rowsPerPart: 32768 },
    ]);
    expect(f16.largestBuffer).toEqual({ name: 'embedding part 1 of 3', bytes: 65536 * 2048 });
    const f32 = planMemory(a, ISSUE_RUN, { ...DEFAULT_LIMITS, shaderF16: false });
    expect(f32.splits).toEqual([{ name: 'embedding', bytes: 151936 * 1024 * 4, parts: 5, rowsPerPart: 32768 }]);
    // an adapter with 1 GiB bindings holds it whole
    expect(planMemory(a, ISSUE_RUN, { maxBufferSize: GiB, maxStorageBufferBindingSize: GiB, maxStorageBuffersPerShaderStage: 10, shaderF16: true }).splits).toEqual([]);
    // untied: the head is split too
    expect(planMemory({ ...a, tiedHead: false }, ISSUE_RUN, { ...DEFAULT_LIMITS, shaderF16: false }).splits.map((s) => s.name)).toEqual(['embedding', 'lm head']);
  });

  it('a 2 GB model on an adapter that offers 1 GB: refused, saying what it needs, what the GPU offers and what to lower', () => {
    // ~1.0 B parameters: 2 GB of f16 weights
    const a = parseHfConfig({
      architectures: ['Qwen3ForCausalLM'],
      hidden_size: 2048,
      intermediate_size: 6144,
      num_hidden_layers: 16,
      num_attention_heads: 16,
      num_key_value_heads: 8,
      head_dim: 128,
      vocab_size: 151936,
      tie_word_embeddings: true,
    });
    expect(parameterCount(a) * 2).toBeGreaterThan(2e9);
    const p = planMemory(a, ISSUE_RUN, { ...DEFAULT_LIMITS, shaderF16: true, memoryBytes: GiB });
    expect(p.fits).toBe(false);
    expect(p.message).toMatch(
      /^Does not fit: this run needs [\d.]+ GiB on the GPU \(weights 3\.69 GiB in f16, adapters .* activations [\d.]+ (MiB|GiB)\); the GPU offers 1\.00 GiB\. Choose a smaller model: the weights alone need 3\.69 GiB in f16\.$/,
    );
    const f32 = planMemory(a, ISSUE_RUN, { ...DEFAULT_LIMITS, shaderF16: false, memoryBytes: GiB });
    expect(f32.message).toContain('(in f32: this GPU has no shader-f16)');
  });

  it('when activations are what does not fit, it names the largest minibatch (or batch) that does', () => {
    const a = real('smollm2-135m');
    // a GPU that holds the run at a minibatch of 4, not of 8
    const memoryBytes = planMemory(a, { ...ISSUE_RUN, trainBatch: 4 }, { ...DEFAULT_LIMITS, shaderF16: true }).totalBytes;
    const offer: AdapterOffer = { ...DEFAULT_LIMITS, shaderF16: true, memoryBytes };
    const p = planMemory(a, ISSUE_RUN, offer);
    expect(p.fits).toBe(false);
    const m = /Lower the training minibatch to (\d+) \(now 8\), or the response length \(now 64\)/.exec(p.message);
    expect(m).not.toBeNull();
    const n = Number(m![1]);
    expect(n).toBeGreaterThanOrEqual(4);
    expect(planMemory(a, { ...ISSUE_RUN, trainBatch: n }, offer).fits).toBe(true);
    expect(planMemory(a, { ...ISSUE_RUN, trainBatch: n + 1 }, offer).fits).toBe(false);
    // inference only: the rollout batch is what to lower
    const infer = planMemory(a, { ...ISSUE_RUN, batch: 512, trainBatch: 0, lora: null, valueHead: false }, offer);
    const b = Number(/Lower the batch to (\d+) \(now 512\)/.exec(infer.message)![1]);
    expect(planMemory(a, { ...ISSUE_RUN, batch: b, trainBatch: 0, lora: null, valueHead: false }, offer).fits).toBe(true);
  });

  it('one layer of a training minibatch larger than one binding, too few storage buffers per stage: each named', () => {
    const a = real('smollm2-135m');
    // 16 × 2 048 tokens × 1 536 intermediate × 4 B = 192 MiB of SwiGLU activations in one tensor
    const long: RunShape = { ...ISSUE_RUN, promptTokens: 1024, responseTokens: 1024, trainBatch: 16, batch: 4 };
    const p = planMemory(a, long, { ...DEFAULT_LIMITS, shaderF16: true });
    expect(p.problems).toContain('the MLP activations of one training layer take 192.0 MiB, more than one binding (128.0 MiB): lower the batch or the sequence length');
    // attention keeps no B·heads·S² probabilities: at 4 × 2 048 tokens the same run fits one binding
    expect(planMemory(a, { ...long, trainBatch: 4 }, { ...DEFAULT_LIMITS, shaderF16: true }).fits).toBe(true);
    const few = planMemory(a, ISSUE_RUN, { ...DEFAULT_LIMITS, maxStorageBuffersPerShaderStage: 4, shaderF16: true });
    expect(few.problems).toEqual(['the adapter offers 4 storage buffers per shader stage; the kernels need 8']);
    // a role's flat adapter buffer is bound whole by the optimiser: 1.8 MiB against 1 MiB bindings
    const small = planMemory(
      a,
      { ...ISSUE_RUN, trainBatch: 1, batch: 1, promptTokens: 4, responseTokens: 4 },
      { ...DEFAULT_LIMITS, maxStorageBufferBindingSize: 2 ** 20, shaderF16: true },
    );
    expect(small.problems).toContain("a role's flat adapter buffer (1.8 MiB) is larger than one binding (1.0 MiB): lower the LoRA rank or adapt fewer projections");
  });

  it('an adapter whose bindings hold less than a dense weight: refused before loading, naming the weight and both sizes', () => {
    const a = real('smollm2-135m');
    // 1 MiB bindings: the embedding splits (rows of 576 f16 = 1 152 B), but mlp up/gate/down (1536 × 576 f16 = 1.7 MiB) cannot
    const small = { maxBufferSize: 2 ** 20, maxStorageBufferBindingSize: 2 ** 20, maxStorageBuffersPerShaderStage: 8, shaderF16: true };
    const p = planMemory(a, { ...ISSUE_RUN, lora: null, trainBatch: 0, valueHead: false, weightDtype: 'f16' }, small);
    expect(p.fits).toBe(false);
    expect(p.problems).toContain('the gate weight (1.7 MiB) is larger than one binding (1.0 MiB); dense weights are not split');
    expect(p.message).toMatch(/^Does not fit: .*the up weight \(1\.7 MiB\) is larger than one binding \(1\.0 MiB\); dense weights are not split/);
    expect(p.splits.find((x) => x.name === 'embedding')).toEqual({ name: 'embedding', bytes: 49152 * 576 * 2, parts: 55, rowsPerPart: 910 }); // ⌊2^20 / 1152⌋ rows, ⌈49152 / 910⌉ parts
  });

  it('f32 weights on a GPU where only f16 weights fit: says so with both sizes', () => {
    const a = real('smollm2-135m');
    const run: RunShape = { ...ISSUE_RUN, lora: null, trainBatch: 0, valueHead: false, batch: 1 };
    const f16 = planMemory(a, { ...run, weightDtype: 'f16' }, { ...DEFAULT_LIMITS, shaderF16: true });
    const f32 = planMemory(a, { ...run, weightDtype: 'f32' }, { ...DEFAULT_LIMITS, shaderF16: true });
    const memoryBytes = Math.floor((f16.totalBytes + f32.totalBytes) / 2);
    const p = planMemory(a, { ...run, weightDtype: 'f32' }, { ...DEFAULT_LIMITS, shaderF16: true, memoryBytes });
    expect(p.fits).toBe(false);
    expect(p.message).toContain(
      `the GPU offers ${formatBytes(memoryBytes)}. Store the weights in f16 (${formatBytes(f16.items[0].bytes)} instead of ${formatBytes(f32.items[0].bytes)}), or: `,
    );
  });

  it('bad run shapes and LoRA targets the family does not have are refused by name', () => {
    const llama = real('smollm2-135m');
    const offer = { ...DEFAULT_LIMITS, shaderF16: true };
    expect(() => planMemory(llama, { ...ISSUE_RUN, batch: 0 }, offer)).toThrow('batch must be an integer ≥ 1, got 0');
    expect(() => planMemory(llama, { ...ISSUE_RUN, lora: { rank: 0, targets: ['q'], roles: 1 } }, offer)).toThrow('lora rank must be a positive integer, got 0');
    expect(() => planMemory(llama, { ...ISSUE_RUN, lora: { rank: 8, targets: ['qkv'], roles: 1 } }, offer)).toThrow(/LoRA target qkv does not exist in LlamaForCausalLM/);
    const gpt2 = parseHfConfig({ architectures: ['GPT2LMHeadModel'] });
    expect(() => planMemory(gpt2, { ...ISSUE_RUN, lora: { rank: 8, targets: ['q'], roles: 1 } }, offer)).toThrow(/GPT-2 has qkv \(c_attn\), o, up \(c_fc\), down \(c_proj\)/);
    expect(loraShape(gpt2, 'qkv')).toEqual([768, 2304]);
    expect(loraShape(real('qwen3-0.6b'), 'o')).toEqual([2048, 1024]);
  });

  it('formats bytes in binary units', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(134217728)).toBe('128.0 MiB');
    expect(formatBytes(2 * GiB)).toBe('2.00 GiB');
  });
});

describe('the training tape the plan counts', () => {
  // layerTapeTensors against what HfModel.layerForward keeps: every tensor of a real tape's layer
  // (its output excepted: the next layer's input), counted once, on fresh synthetic folders.
  const FAMILIES = [
    { family: 'llama', targets: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'], planned: ['q', 'k', 'v', 'o', 'gate', 'up', 'down'] },
    { family: 'qwen3', targets: ['q_proj', 'v_proj'], planned: ['q', 'v'] },
    { family: 'qwen2', targets: [], planned: [] },
    { family: 'gpt2', targets: ['c_attn', 'c_proj', 'c_fc'], planned: ['qkv', 'o', 'down', 'up'] },
  ] as const;
  it.each(FAMILIES.map((f) => [f.family, f] as const))('%s: every layer keeps the tensors of layerTapeTensors, layerTapeWords per token', async (_name, f) => {
    const be = new CpuBackend();
    const folder = await synthesizeToMemory({ family: f.family, dtype: 'F32', shards: 1, seed: rng(5200 + f.family.length).nextU32() });
    const info = await openHfFolder(folder);
    const model = await HfModel.load(be, folder, info, 'f32');
    const rank = 3;
    if (f.targets.length > 0) model.setAdapters(newLoraTrainable(model, { r: rank, alpha: 6, rslora: false, targets: [...f.targets] }, 7).adapters);
    const prompts = [
      [5, 6, 7],
      [8, 9],
    ];
    const responses = [
      [10, 11],
      [12, 13, 14, 15],
    ];
    const { tape } = responseLogprobsTaped(model, prompts, responses);
    const R = tape.B * tape.S;
    const adapted = (f.planned as readonly string[]).reduce((n, t) => n + (t === 'qkv' ? 3 : 1), 0);
    expect(adapted).toBe(Object.keys(tape.layers[0].scaledDown).length);
    const want = R * layerTapeWords(model.arch, adapted, rank);
    const widths = (xs: number[]) => [...xs].sort((x, y) => x - y);
    const wantTensors = widths(layerTapeTensors(model.arch, adapted, rank));
    for (const [l, layer] of tape.layers.entries()) {
      const kept = new Set<Tensor>();
      const add = (t: Tensor | null | undefined) => t && kept.add(t);
      const { y: _next, scaledDown, n1, n2, qNormed, kNormed, ...rest } = layer;
      for (const t of Object.values(rest) as (Tensor | null)[]) add(t);
      for (const n of [n1, n2, qNormed, kNormed]) if (n) [n.y, n.rstd, n.mean].forEach(add);
      for (const t of Object.values(scaledDown)) add(t);
      expect(
        [...kept].reduce((s, t) => s + t.size, 0),
        `layer ${l}`,
      ).toBe(want);
      // tensor by tensor, as the plan rounds each to its pool buffer: every one R rows of its width
      expect(widths([...kept].map((t) => t.size / R)), `layer ${l}`).toEqual(wantTensors);
    }
  });
});
