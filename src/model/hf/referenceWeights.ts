// A folder's weights as the float64 reference forward takes them (src/reference/hf/forward.ts): every
// linear nn.Linear-shaped (out, in). GPT-2's Conv1D weights (in, out) are transposed here and its fused
// c_attn (D, 3D) is split into q, k, v — columns [0, D), [D, 2D), [2D, 3D) of the output, as
// GPT2Attention's `c_attn(x).split(split_size, dim=2)`. Values are read exactly (BF16/F16 widen exactly).
import type { RefLayer, RefLinear, RefNorm, RefWeights } from '../../reference/hf/forward.ts';
import type { ModelFolder } from './folder.ts';
import type { HfFolderInfo } from './open.ts';
import { readWeightF32, transpose } from './readWeights.ts';
import { weight, type WeightRef } from './weights.ts';

export async function loadReferenceWeights(folder: ModelFolder, info: HfFolderInfo): Promise<RefWeights> {
  const a = info.arch;
  const map = info.weights;
  const read = async (name: string) => Float64Array.from(await readWeightF32(folder, weight(map, name)));
  const maybe = async (name: string) => (map.byName.has(name) ? read(name) : null);
  /** A linear from a stored weight: (out, in) as is, (in, out) transposed. */
  const linear = async (name: string, bias: string | null): Promise<RefLinear> => {
    const ref: WeightRef = weight(map, name);
    const raw = await readWeightF32(folder, ref);
    const [r, c] = ref.shape;
    const w = ref.layout === 'inOut' ? transpose(raw, r, c) : Float64Array.from(raw);
    const [out, inn] = ref.layout === 'inOut' ? [c, r] : [r, c];
    return { w, b: bias && map.byName.has(bias) ? await read(bias) : null, out, in: inn };
  };
  const normOf = async (w: string): Promise<RefNorm> => ({ w: await read(w), b: await maybe(`${w}Bias`) });

  const layers: RefLayer[] = [];
  for (let l = 0; l < a.nLayer; l++) {
    const p = `layers.${l}`;
    let q: RefLinear;
    let k: RefLinear;
    let v: RefLinear;
    if (a.family === 'gpt2') {
      const fused = await linear(`${p}.qkv`, `${p}.qkvBias`); // (3D, D) after the transpose
      const D = a.dModel;
      const part = (i: number): RefLinear => ({ w: fused.w.slice(i * D * D, (i + 1) * D * D), b: fused.b ? fused.b.slice(i * D, (i + 1) * D) : null, out: D, in: D });
      [q, k, v] = [part(0), part(1), part(2)];
    } else {
      q = await linear(`${p}.q`, `${p}.qBias`);
      k = await linear(`${p}.k`, `${p}.kBias`);
      v = await linear(`${p}.v`, `${p}.vBias`);
    }
    layers.push({
      inputNorm: await normOf(`${p}.inputNorm`),
      q,
      k,
      v,
      o: await linear(`${p}.o`, `${p}.oBias`),
      qNorm: await maybe(`${p}.qNorm`),
      kNorm: await maybe(`${p}.kNorm`),
      postNorm: await normOf(`${p}.postNorm`),
      gate: a.mlp === 'gated' ? await linear(`${p}.gate`, `${p}.gateBias`) : null,
      up: await linear(`${p}.up`, `${p}.upBias`),
      down: await linear(`${p}.down`, `${p}.downBias`),
    });
  }
  const embed = await read('embed');
  return {
    embed,
    positions: await maybe('positions'),
    layers,
    finalNorm: await normOf('finalNorm'),
    lmHead: a.tiedHead ? embed : await read('lmHead'),
  };
}
