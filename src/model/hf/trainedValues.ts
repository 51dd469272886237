// Trained weights (in the device layout, weightLayout.ts) by their safetensors key, for writing a
// Llama/Qwen2/Qwen3 folder in transformers' own layout (modeling_llama / qwen2 / qwen3 state_dict
// keys, nn.Linear (out, in)). GPT-2's fused c_attn would need its q, k, v joined and transposed:
// not written here (the shipped model is a Qwen3).
import type { HfArch } from './arch.ts';
import type { LinearOf, WeightsOf } from './weightLayout.ts';

const PROJ: Record<string, 'q' | 'k' | 'v' | 'o' | 'gate' | 'up' | 'down'> = {
  'self_attn.q_proj': 'q',
  'self_attn.k_proj': 'k',
  'self_attn.v_proj': 'v',
  'self_attn.o_proj': 'o',
  'mlp.gate_proj': 'gate',
  'mlp.up_proj': 'up',
  'mlp.down_proj': 'down',
};

/** key → values of a trained weight set; throws naming a key the model has no weight for. */
export function valuesByKey(a: HfArch, w: WeightsOf<ArrayLike<number>>): (key: string) => ArrayLike<number> {
  if (a.family === 'gpt2') throw new Error('writing trained GPT-2 weights (fused c_attn, Conv1D layout) is not supported; Llama and Qwen families are');
  if (w.embed.length !== 1) throw new Error(`the embedding is split in ${w.embed.length} parts; a trained model this size is not written`);
  return (key) => {
    const missing = (): never => {
      throw new Error(`${key}: no trained weight of a ${a.family} model has this key`);
    };
    if (key === 'model.embed_tokens.weight') return w.embed[0];
    if (key === 'model.norm.weight') return w.finalNorm.w;
    if (key === 'lm_head.weight') return a.tiedHead ? missing() : w.head.length === 1 ? w.head[0] : missing();
    const m = /^model\.layers\.(\d+)\.(.+)\.(weight|bias)$/.exec(key);
    const L = m ? w.layers[Number(m[1])] : undefined;
    if (!m || !L) return missing();
    const [, , module, kind] = m;
    if (module === 'input_layernorm' && kind === 'weight') return L.inputNorm.w;
    if (module === 'post_attention_layernorm' && kind === 'weight') return L.postNorm.w;
    if (module === 'self_attn.q_norm' && kind === 'weight') return L.qNorm ?? missing();
    if (module === 'self_attn.k_norm' && kind === 'weight') return L.kNorm ?? missing();
    const proj = PROJ[module];
    const lin: LinearOf<ArrayLike<number>> | null = proj ? L[proj] : null;
    if (!lin) return missing();
    return kind === 'weight' ? lin.w : (lin.b ?? missing());
  };
}
