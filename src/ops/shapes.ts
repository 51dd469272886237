// Shape checks and sizes shared by the op modules: each throws a message naming the argument.
import { expectShape, type Tensor } from '../backend/tensor.ts';

/** Checks that the first tensor is (B, A) and the others share its shape; returns [B, A]. */
export function expectBA(first: [string, Tensor], ...rest: [string, Tensor][]): [number, number] {
  const [name, t] = first;
  if (t.shape.length !== 2) throw new Error(`${name}: expected shape (B, A), got [${t.shape.join(', ')}]`);
  for (const [n, u] of rest) expectShape(n, u, t.shape);
  return [t.shape[0], t.shape[1]];
}
