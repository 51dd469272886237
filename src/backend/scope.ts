// tidy-style scopes shared by both backends (Backend.scope): every tensor an op returns, and every
// tensor()/zeros()/reshape() result, is recorded in the innermost open scope; when the scope's
// function returns, what it made and does not return is disposed, and what it returns moves to the
// enclosing scope. Op-internal temporaries are the op's own business and never reach a scope.
import type { Tensor } from './tensor.ts';

function isTensor(x: unknown): x is Tensor {
  return typeof x === 'object' && x !== null && Array.isArray((x as Tensor).shape) && typeof (x as Tensor).size === 'number' && typeof (x as Tensor).dtype === 'string';
}

/** Tensors in a value: itself, or the elements / fields of an array or plain object (two levels deep). */
function collect(x: unknown, into: Set<Tensor>, depth = 0): void {
  if (isTensor(x)) into.add(x);
  else if (depth < 2 && Array.isArray(x)) for (const v of x) collect(v, into, depth + 1);
  else if (depth < 2 && typeof x === 'object' && x !== null && Object.getPrototypeOf(x) === Object.prototype) {
    for (const v of Object.values(x)) collect(v, into, depth + 1);
  }
}

/**
 * The tensors a scope would keep of `x` (itself, or the fields / elements of a record or array of
 * them), so a bundle that outlives an await (an Experience, a minibatch) is disposed whole with
 * `be.dispose(...tensorsIn(x))` and a field added later cannot be forgotten.
 */
export function tensorsIn(x: unknown): Tensor[] {
  const out = new Set<Tensor>();
  collect(x, out);
  return [...out];
}

export class Scopes {
  private readonly stack: Set<Tensor>[] = [];

  constructor(private readonly dispose: (...ts: Tensor[]) => void) {}

  /** Records the tensors of an op's result in the innermost scope (none open: nothing to do). */
  track<T>(result: T): T {
    const top = this.stack[this.stack.length - 1];
    if (top) collect(result, top);
    return result;
  }

  run<T>(fn: () => T): T {
    const made = new Set<Tensor>();
    this.stack.push(made);
    let out: T;
    try {
      out = fn();
      if (out instanceof Promise) throw new Error('scope: the function must be synchronous (work is recorded, not awaited)');
    } catch (e) {
      this.stack.pop();
      this.dispose(...made);
      throw e;
    }
    this.stack.pop();
    const kept = new Set<Tensor>();
    collect(out, kept);
    this.dispose(...[...made].filter((t) => !kept.has(t)));
    const parent = this.stack[this.stack.length - 1];
    if (parent) for (const t of kept) if (made.has(t)) parent.add(t);
    return out;
  }
}
