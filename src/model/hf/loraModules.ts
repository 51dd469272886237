// Which modules a PEFT LoRA adapter targets, by family, and which of the loader's projections each
// feeds. The Llama family's modules are its projections one for one (q_proj … down_proj). GPT-2's
// are Conv1D modules the loader splits or renames: c_attn (in D, out 3D) is q, k and v side by
// side, so its one A (r, D) is shared by the three and its B (3D, r) is their three B's stacked
// row-wise; the target "c_proj" matches two modules (attn.c_proj → o, mlp.c_proj → down), as
// PEFT matches target names by suffix; c_fc is up. PEFT stores lora_A (r, in) and lora_B (out, r)
// for Conv1D as for nn.Linear (in = the Conv1D weight's first dimension) and merges W + s·(B·A)ᵀ
// into the stored (in, out) weight (fan_in_fan_out).
import type { HfArch, HfFamily } from './arch.ts';
import { GPT2_LORA_MODULES, LORA_TARGETS, type LoraModuleName, loraModulePath, type LoraTarget } from './lora.ts';
import type { LoraTarget as PlannedTarget } from './memoryPlan.ts';

/** The names target_modules may list for a family ("all-linear" means all of them). */
export function loraModulesOf(family: HfFamily): readonly LoraModuleName[] {
  return family === 'gpt2' ? GPT2_LORA_MODULES : LORA_TARGETS;
}

/** Throws, naming the allowed names, unless every target is one of the family's modules. */
export function checkLoraTargets(family: HfFamily, targets: readonly string[]): asserts targets is readonly LoraModuleName[] {
  const allowed: readonly string[] = loraModulesOf(family);
  const bad = targets.filter((t) => !allowed.includes(t));
  if (targets.length === 0 || bad.length > 0)
    throw new Error(
      `LoRA targets: ${bad.length > 0 ? `${bad.join(', ')} ${bad.length > 1 ? 'are' : 'is'} not` : 'none given; at least one is'} a module of a ${family} model (allowed: ${allowed.join(', ')})`,
    );
}

/** (out, in) of each projection the loader lays out (the weight's (out, in) as uploaded). */
export function targetDims(a: HfArch, target: LoraTarget): { out: number; in: number } {
  const q = a.nHead * a.headDim;
  const kv = a.nKvHead * a.headDim;
  const F = a.dFf;
  const dims: Record<LoraTarget, [number, number]> = {
    q_proj: [q, a.dModel],
    k_proj: [kv, a.dModel],
    v_proj: [kv, a.dModel],
    o_proj: [a.dModel, q],
    gate_proj: [F, a.dModel],
    up_proj: [F, a.dModel],
    down_proj: [a.dModel, F],
  };
  const [out, inF] = dims[target];
  return { out, in: inF };
}

/** One adapted module of one layer: A (r, in), B (out, r); B's rows [from, to) are the projection `target`'s. */
export interface AdapterModule {
  layer: number;
  name: LoraModuleName;
  path: string; // the transformers module path, e.g. model.layers.0.self_attn.q_proj
  in: number;
  out: number;
  slots: { target: LoraTarget; from: number; to: number }[];
}

/** Every adapted module, layer by layer, each layer's in the order of `targets`. */
export function adapterModules(a: HfArch, targets: readonly LoraModuleName[]): AdapterModule[] {
  checkLoraTargets(a.family, targets);
  const out: AdapterModule[] = [];
  const whole = (layer: number, name: LoraModuleName, path: string, target: LoraTarget): AdapterModule => {
    const d = targetDims(a, target);
    return { layer, name, path, in: d.in, out: d.out, slots: [{ target, from: 0, to: d.out }] };
  };
  for (let l = 0; l < a.nLayer; l++) {
    for (const name of targets) {
      if (a.family !== 'gpt2') {
        out.push(whole(l, name, loraModulePath(l, name as LoraTarget), name as LoraTarget));
        continue;
      }
      const p = `transformer.h.${l}`;
      if (name === 'c_attn') {
        const q = targetDims(a, 'q_proj').out;
        const kv = targetDims(a, 'k_proj').out;
        const slots = [
          { target: 'q_proj' as const, from: 0, to: q },
          { target: 'k_proj' as const, from: q, to: q + kv },
          { target: 'v_proj' as const, from: q + kv, to: q + 2 * kv },
        ];
        out.push({ layer: l, name, path: `${p}.attn.c_attn`, in: a.dModel, out: q + 2 * kv, slots });
      } else if (name === 'c_proj') {
        out.push(whole(l, name, `${p}.attn.c_proj`, 'o_proj'), whole(l, name, `${p}.mlp.c_proj`, 'down_proj'));
      } else {
        out.push(whole(l, name, `${p}.mlp.c_fc`, 'up_proj'));
      }
    }
  }
  return out;
}

/** The memory plan's name (memoryPlan.ts) of each module `targets` adapts in a layer: a module feeding several projections (GPT-2's c_attn) is `qkv`. */
export function plannedLoraTargets(a: HfArch, targets: readonly LoraModuleName[]): PlannedTarget[] {
  return adapterModules(a, targets)
    .filter((m) => m.layer === 0)
    .map((m): PlannedTarget => (m.slots.length > 1 ? 'qkv' : (m.slots[0].target.replace('_proj', '') as PlannedTarget)));
}
