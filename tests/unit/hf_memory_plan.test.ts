// The memory plan: exact byte counts for the parts that have a closed form, splits of tables larger than
// one binding, and verdicts that say what is needed, what the GPU offers and what to lower.
import { describe, expect, it } from 'vitest';
import { parameterCount, type HfArch } from '../../src/model/hf/arch.ts';
import { parseHfConfig } from '../../src/model/hf/config.ts';
import { formatBytes, loraShape, planMemory, type AdapterOffer, type RunShape } from '../../src/model/hf/memoryPlan.ts';
import { describeSynthetic, REAL_SHAPES } from '../../src/model/hf/synthetic.ts';

const DEFAULT_LIMITS = { maxBufferSize: 268435456, maxStorageBufferBindingSize: 134217728, maxStorageBuffersPerShaderStage: 8 };
const GiB = 2 ** 30;

function real(name: keyof typeof REAL_SHAPES): HfArch {
  const s = REAL_SHAPES[name];
  return describeSynthetic({ family: s.family, dtype: 'BF16', shards: 1, seed: 0, dims: s.dims, tied: s.tied }).arch!;
}

const ISSUE_RUN: RunShape = { batch: 32, promptTokens: 48, responseTokens: 64, trainBatch: 8, lora: { rank: 8, targets: ['q', 'v'], roles: 2 }, valueHead: true };

describe('planMemory', () => {
  it('SmolLM2-135M: f16 weights are 2 bytes per parameter, the KV cache is layers × 2 × kv heads × head_dim × tokens × batch', () => {
    const a = real('smollm2-135m');
    const offer: AdapterOffer = { ...DEFAULT_LIMITS, shaderF16: true, memoryBytes: 8 * GiB };
    const p = planMemory(a, ISSUE_RUN, offer);
    expect(p.fits).toBe(true);
    expect(p.weightDtype).toBe('f16');
    expect(p.items.find((i) => i.what === 'weights')!.bytes).toBe(2 * 134515008);
    expect(p.items.find((i) => i.what === 'kv cache')!.bytes).toBe(30 * 2 * 3 * 64 * 112 * 32 * 4);
    // LoRA r 8 on q (576→576) and v (576→192), 30 layers, actor + critic, plus a value head; ×4 f32 (w, grad, m, v)
    const lora = 2 * 30 * 8 * (576 + 576 + 576 + 192) + 577;
    expect(p.items.find((i) => i.what === 'adapters')!.bytes).toBe(lora * 16);
    expect(p.splits).toEqual([]);
    expect(p.message).toMatch(/^Fits: this run needs [\d.]+ (GiB|MiB) \(weights 256\.6 MiB in f16\); the GPU offers 8\.00 GiB\.$/);
    // without shader-f16 the weights double
    expect(planMemory(a, ISSUE_RUN, { ...offer, shaderF16: false }).items[0].bytes).toBe(4 * 134515008);
  });

  it('Qwen3-0.6B: the 151 936-row embedding is split by rows to fit 128 MiB bindings (3 parts in f16, 5 in f32)', () => {
    const a = real('qwen3-0.6b');
    const f16 = planMemory(a, { ...ISSUE_RUN, lora: null, trainBatch: 0, valueHead: false }, { ...DEFAULT_LIMITS, shaderF16: true });
    expect(f16.splits).toEqual([{ name: 'embedding', bytes: 151936 * 1024 * 2, parts: 3, rowsPerPart: 65536 }]);
    expect(f16.largestBuffer).toEqual({ name: 'embedding (one of 3 parts)', bytes: 65536 * 2048 });
    expect(planMemory(a, ISSUE_RUN, { ...DEFAULT_LIMITS, shaderF16: false }).splits[0]).toMatchObject({ parts: 5, rowsPerPart: 32768 });
    // an adapter with 1 GiB bindings holds it whole
    expect(planMemory(a, ISSUE_RUN, { maxBufferSize: GiB, maxStorageBufferBindingSize: GiB, maxStorageBuffersPerShaderStage: 10, shaderF16: true }).splits).toEqual([]);
    // untied: the head is split too
    expect(planMemory({ ...a, tiedHead: false }, ISSUE_RUN, { ...DEFAULT_LIMITS, shaderF16: true }).splits.map((s) => s.name)).toEqual(['embedding', 'lm head']);
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
      /^Does not fit: this run needs [\d.]+ GiB on the GPU \(weights 2\.\d\d GiB in f16, adapters .* activations [\d.]+ (MiB|GiB)\); the GPU offers 1\.00 GiB\. Choose a smaller model: the weights alone need 2\.\d\d GiB\.$/,
    );
    const f32 = planMemory(a, ISSUE_RUN, { ...DEFAULT_LIMITS, shaderF16: false, memoryBytes: GiB });
    expect(f32.message).toContain('(in f32: this GPU has no shader-f16)');
  });

  it('when activations are what does not fit, it names the largest minibatch (or batch) that does', () => {
    const a = real('smollm2-135m');
    const offer: AdapterOffer = { ...DEFAULT_LIMITS, shaderF16: true, memoryBytes: GiB };
    const p = planMemory(a, ISSUE_RUN, offer);
    expect(p.fits).toBe(false);
    const m = /Lower the training minibatch to (\d+) \(now 8\), or the response length \(now 64\)/.exec(p.message);
    expect(m).not.toBeNull();
    const n = Number(m![1]);
    expect(planMemory(a, { ...ISSUE_RUN, trainBatch: n }, offer).fits).toBe(true);
    expect(planMemory(a, { ...ISSUE_RUN, trainBatch: n + 1 }, offer).fits).toBe(false);
    // inference only: the rollout batch is what to lower
    const infer = planMemory(a, { ...ISSUE_RUN, batch: 512, trainBatch: 0, lora: null, valueHead: false }, offer);
    const b = Number(/Lower the batch to (\d+) \(now 512\)/.exec(infer.message)![1]);
    expect(planMemory(a, { ...ISSUE_RUN, batch: b, trainBatch: 0, lora: null, valueHead: false }, offer).fits).toBe(true);
  });

  it('attention probabilities larger than one binding, too few storage buffers per stage: each named', () => {
    const a = real('smollm2-135m');
    const long: RunShape = { ...ISSUE_RUN, promptTokens: 1024, responseTokens: 1024, trainBatch: 4, batch: 4 };
    const p = planMemory(a, long, { ...DEFAULT_LIMITS, shaderF16: true });
    expect(
      p.problems.some((x) =>
        /^the training attention probabilities \(one layer\) take 576\.0 MiB, more than one binding \(128\.0 MiB\): lower the batch or the sequence length$/.test(x),
      ),
    ).toBe(true);
    const few = planMemory(a, ISSUE_RUN, { ...DEFAULT_LIMITS, maxStorageBuffersPerShaderStage: 4, shaderF16: true });
    expect(few.problems).toEqual(['the adapter offers 4 storage buffers per shader stage; the kernels need 8']);
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
