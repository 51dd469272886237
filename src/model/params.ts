// Parameter layout of the GPT: every tensor lives in ONE flat buffer at an offset that is a multiple
// of 64 elements (so `be.view` bindings stay 256-byte aligned); gradients and the AdamW moments use
// the same layout in their own flat buffers, so one gradNorm and one adamw dispatch cover a model.
// Names follow Hugging Face GPT-2 (weights stored (in, out) like its Conv1D, except the scalar heads
// which are nn.Linear-style (1, D)), so checkpoints read naturally in Python.
import type { Rng } from '../util/rng.ts';
import type { GptConfig, HeadKind } from './config.ts';

export const PARAM_ALIGN = 64;

export type ParamInit = { kind: 'normal'; std: number } | { kind: 'zeros' } | { kind: 'ones' };

export interface ParamEntry {
  name: string;
  shape: number[];
  /** Element offset in the flat buffer (multiple of PARAM_ALIGN). */
  offset: number;
  size: number;
  /** Whether decoupled weight decay applies (matmul weights only). */
  decay: boolean;
  init: ParamInit;
  /** Part of the shared trunk (copied from an SFT checkpoint into a critic / reward model). */
  trunk: boolean;
}

export interface ParamLayout {
  entries: ParamEntry[];
  byName: Map<string, ParamEntry>;
  /** Elements of the flat buffer, padding included. */
  total: number;
}

export function headParamPrefix(head: HeadKind): string | null {
  return head === 'value' ? 'value_head' : head === 'reward' ? 'reward_head' : null;
}

export function paramLayout(cfg: GptConfig): ParamLayout {
  const D = cfg.dModel;
  const entries: ParamEntry[] = [];
  let offset = 0;
  const add = (name: string, shape: number[], init: ParamInit, decay: boolean, trunk = true) => {
    const size = shape.reduce((a, b) => a * b, 1);
    entries.push({ name, shape, offset, size, decay, init, trunk });
    offset += Math.ceil(size / PARAM_ALIGN) * PARAM_ALIGN;
  };
  const w = { kind: 'normal', std: 0.02 } as const;
  // GPT-2 scales the projections that write into the residual stream by 1/√(2L) so the residual
  // variance does not grow with depth.
  const wResid = { kind: 'normal', std: 0.02 / Math.sqrt(2 * cfg.nLayer) } as const;
  const zeros = { kind: 'zeros' } as const;
  const ones = { kind: 'ones' } as const;
  // Embeddings are not decayed: with a tiny vocabulary, decay would shrink rarely seen tokens'
  // rows (and, through the tied head, their logits) for reasons unrelated to the data.
  add('wte.weight', [cfg.vocabSize, D], w, false);
  add('wpe.weight', [cfg.maxSeq, D], w, false);
  for (let l = 0; l < cfg.nLayer; l++) {
    const h = `h.${l}`;
    add(`${h}.ln_1.weight`, [D], ones, false);
    add(`${h}.ln_1.bias`, [D], zeros, false);
    add(`${h}.attn.c_attn.weight`, [D, 3 * D], w, true);
    add(`${h}.attn.c_attn.bias`, [3 * D], zeros, false);
    add(`${h}.attn.c_proj.weight`, [D, D], wResid, true);
    add(`${h}.attn.c_proj.bias`, [D], zeros, false);
    add(`${h}.ln_2.weight`, [D], ones, false);
    add(`${h}.ln_2.bias`, [D], zeros, false);
    add(`${h}.mlp.c_fc.weight`, [D, 4 * D], w, true);
    add(`${h}.mlp.c_fc.bias`, [4 * D], zeros, false);
    add(`${h}.mlp.c_proj.weight`, [4 * D, D], wResid, true);
    add(`${h}.mlp.c_proj.bias`, [D], zeros, false);
  }
  add('ln_f.weight', [D], ones, false);
  add('ln_f.bias', [D], zeros, false);
  const prefix = headParamPrefix(cfg.head);
  if (prefix) {
    // The critic starts at value 0 everywhere (zero head) so early advantages come from rewards
    // alone; the reward head starts small and random (std 1/(D+1), as OpenRLHF) to break symmetry.
    const headInit: ParamInit = cfg.head === 'value' ? zeros : { kind: 'normal', std: 1 / (D + 1) };
    add(`${prefix}.weight`, [1, D], headInit, true, false);
    add(`${prefix}.bias`, [1], zeros, false, false);
  }
  return { entries, byName: new Map(entries.map((e) => [e.name, e])), total: offset };
}

/** Fresh parameters (host, flat, padding zero) drawn from `rng` in layout order. */
export function initParams(layout: ParamLayout, rng: Rng): Float64Array {
  const flat = new Float64Array(layout.total);
  for (const e of layout.entries) fillInit(flat, e, rng);
  return flat;
}

export function fillInit(flat: Float64Array, e: ParamEntry, rng: Rng): void {
  const init = e.init;
  for (let i = 0; i < e.size; i++) {
    flat[e.offset + i] = init.kind === 'normal' ? rng.normal() * init.std : init.kind === 'ones' ? 1 : 0;
  }
}

/** 1 on decayed weights, 0 on biases, LayerNorm gains, embeddings and padding. */
export function decayMask(layout: ParamLayout): Float64Array {
  const m = new Float64Array(layout.total);
  for (const e of layout.entries) if (e.decay) m.fill(1, e.offset, e.offset + e.size);
  return m;
}
