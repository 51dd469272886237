// Argument checks shared by both PPO backends, so each rejects bad shapes with the same message
// before any work is recorded.
import { expectDType, expectShape, type Tensor } from './tensor.ts';

/** (B, A) of a (B, A) tensor, checking that the others share its shape. */
export function dimsBA(first: [string, Tensor], ...rest: [string, Tensor][]): [number, number] {
  const [name, t] = first;
  if (t.shape.length !== 2) throw new Error(`${name}: expected shape (B, A), got [${t.shape.join(', ')}]`);
  for (const [n, u] of rest) expectShape(n, u, t.shape);
  return [t.shape[0], t.shape[1]];
}

export function checkLogprobsArgs(logits: Tensor, tokens: Tensor, temperature: number): [number, number, number] {
  if (logits.shape.length !== 3 || logits.shape[2] < 1) throw new Error(`logits: expected shape (B, A, V) with V ≥ 1, got [${logits.shape.join(', ')}]`);
  const [B, A, V] = logits.shape;
  expectShape('tokens', tokens, [B, A]);
  expectDType('tokens', tokens, 'i32');
  if (!(Number.isFinite(temperature) && temperature > 0)) throw new Error(`temperature must be a finite number > 0, got ${temperature}`);
  return [B, A, V];
}
