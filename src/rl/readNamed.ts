// One readback of many tensors, answered by name: `readNamed(be, { kl: exp.kl, stats: [a, b] })`
// resolves to `{ kl: Float64Array, stats: Float64Array[] }` after a single be.readMany.
import type { Backend } from '../backend/backend.ts';
import type { Tensor } from '../backend/tensor.ts';

type Readable = Tensor | readonly Tensor[] | null;
type HostOf<V> = V extends Tensor ? Float64Array : V extends readonly Tensor[] ? Float64Array[] : null;
export type HostValues<T extends Record<string, Readable>> = { [K in keyof T]: HostOf<T[K]> };

export async function readNamed<T extends Record<string, Readable>>(be: Backend, named: T): Promise<HostValues<T>> {
  const entries = Object.entries(named);
  const flat = entries.flatMap(([, v]) => (v === null ? [] : Array.isArray(v) ? v : [v as Tensor]));
  const host = await be.readMany(flat);
  let i = 0;
  const out: Record<string, Float64Array | Float64Array[] | null> = {};
  for (const [k, v] of entries) {
    if (v === null) out[k] = null;
    else if (Array.isArray(v)) {
      out[k] = host.slice(i, i + v.length);
      i += v.length;
    } else out[k] = host[i++];
  }
  return out as HostValues<T>;
}
