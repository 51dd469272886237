// Random weights of a Hugging Face architecture made straight on the backend, in the layout
// uploadWeights gives a folder (weightLayout.ts): what the bench runs real shapes on without writing
// a multi-GB folder. Values: norms 1 ± 0.1, everything else N(0, 0.02²)-like; one block of random
// values is drawn from the seed and reused at shifting offsets (the bench measures speed, and a
// 600 M-parameter model then takes seconds to build, not minutes).
import type { Backend } from '../../backend/backend.ts';
import type { Tensor } from '../../backend/tensor.ts';
import { Rng } from '../../util/rng.ts';
import type { HfArch } from './arch.ts';
import type { DeviceWeights } from './deviceWeights.ts';
import { f32BitsToF16Bits } from './dtype.ts';
import { type BufferSpec, layoutBuffers, mapWeights, uploadBytes, type WeightDType, weightLayout } from './weightLayout.ts';

const BLOCK = 1 << 16;

export function randomDeviceWeights(be: Backend, a: HfArch, dtype: WeightDType, seed: number, tableBytes: number): DeviceWeights {
  const r = new Rng(seed);
  const block = Float32Array.from({ length: BLOCK }, () => 0.02 * r.normal());
  const block16 = Uint16Array.from(block, (x) => f32BitsToF16Bits(x));
  let offset = 0;
  const fill = <T extends Float32Array | Uint16Array>(out: T, src: T, scale: (x: number) => number = (x) => x): T => {
    const start = offset++ % BLOCK;
    for (let i = 0; i < out.length; i++) out[i] = scale(src[(start + i) % BLOCK]);
    return out;
  };
  const layout = weightLayout(a, dtype, tableBytes);
  const make = (b: BufferSpec): Tensor => {
    const n = b.shape.reduce((x, y) => x * y, 1);
    if (b.dtype === 'f16') return be.tensorF16Bits(fill(new Uint16Array(n), block16), b.shape);
    const isNorm = / norm$/.test(b.name);
    return be.tensor(fill(new Float32Array(n), block, isNorm ? (x) => 1 + 5 * x : (x) => x), b.shape);
  };
  const weights = mapWeights(layout.weights, make);
  const bytes = layoutBuffers({ weights: layout.weights, frequencies: null }).reduce((s, b) => s + uploadBytes(b), 0);
  return { ...weights, dtype, bytes };
}
