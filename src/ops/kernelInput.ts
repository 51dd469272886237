// Parsing and validation of `npm run kernel` inputs (each op's `json` adapter): every problem
// names the field. Arrays are nested JSON arrays ([B][T] unless noted); they must be rectangular
// and finite.
import type { Backend } from '../backend/backend.ts';
import type { Tensor } from '../backend/tensor.ts';

export class InputError extends Error {}

export interface Dense {
  data: Float64Array;
  shape: number[];
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'string' ? `the string ${JSON.stringify(v.slice(0, 20))}` : `${typeof v} ${JSON.stringify(v)}`;
}

/** A rectangular numeric array of the given rank; booleans count as 0/1 where `allowBool`. */
export function denseArray(input: Record<string, unknown>, field: string, rank: number, opts: { integer?: boolean; allowBool?: boolean } = {}): Dense {
  if (!(field in input)) throw new InputError(`missing field "${field}" (expected a ${rank}-D array)`);
  const shape: number[] = [];
  const flat: number[] = [];
  const walk = (v: unknown, depth: number, path: string): void => {
    if (depth === rank) {
      let x = v;
      if (typeof x === 'boolean' && opts.allowBool) x = x ? 1 : 0;
      if (typeof x !== 'number') throw new InputError(`field "${field}"${path}: expected a number, got ${describe(v)}`);
      if (!Number.isFinite(x)) throw new InputError(`field "${field}"${path}: ${x} is not finite`);
      if (opts.integer && !Number.isInteger(x)) throw new InputError(`field "${field}"${path}: expected an integer, got ${x}`);
      flat.push(x);
      return;
    }
    if (!Array.isArray(v)) throw new InputError(`field "${field}"${path}: expected an array (rank ${rank}), got ${describe(v)}`);
    if (shape.length === depth) shape.push(v.length);
    else if (shape[depth] !== v.length) {
      throw new InputError(`field "${field}"${path}: ragged array (length ${v.length}, expected ${shape[depth]})`);
    }
    v.forEach((x, i) => {
      walk(x, depth + 1, `${path}[${i}]`);
    });
  };
  walk(input[field], 0, '');
  while (shape.length < rank) shape.push(0);
  return { data: Float64Array.from(flat), shape };
}

export function numberField(
  input: Record<string, unknown>,
  field: string,
  opts: { min?: number; max?: number; exclusiveMin?: boolean; optional?: boolean; fallback?: number } = {},
): number | null {
  if (!(field in input) || input[field] === null) {
    if (opts.optional) return opts.fallback ?? null;
    throw new InputError(`missing field "${field}" (expected a number)`);
  }
  const v = input[field];
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new InputError(`field "${field}": expected a finite number, got ${describe(v)}`);
  if (opts.min !== undefined && (v < opts.min || (opts.exclusiveMin && v === opts.min))) {
    throw new InputError(`field "${field}": ${v} is out of range (must be ${opts.exclusiveMin ? '>' : '≥'} ${opts.min})`);
  }
  if (opts.max !== undefined && v > opts.max) throw new InputError(`field "${field}": ${v} is out of range (must be ≤ ${opts.max})`);
  return v;
}

export function choiceField<T extends string>(input: Record<string, unknown>, field: string, choices: readonly T[], fallback?: T): T {
  if (!(field in input)) {
    if (fallback !== undefined) return fallback;
    throw new InputError(`missing field "${field}" (one of ${choices.join(', ')})`);
  }
  const v = input[field];
  if (typeof v !== 'string' || !choices.includes(v as T)) throw new InputError(`field "${field}": ${describe(v)} is not one of ${choices.join(', ')}`);
  return v as T;
}

export function boolField(input: Record<string, unknown>, field: string): boolean {
  const v = input[field];
  if (typeof v !== 'boolean') throw new InputError(`field "${field}": expected true or false, got ${field in input ? describe(v) : 'nothing (missing)'}`);
  return v;
}

/** Checks that `d` has the shape `[dims...]`, naming the field and the field it must agree with. */
export function sameShape(field: string, d: Dense, shape: readonly number[], against: string): void {
  if (d.shape.length !== shape.length || d.shape.some((x, i) => x !== shape[i])) {
    throw new InputError(`field "${field}": shape [${d.shape.join(', ')}] does not match "${against}" [${shape.join(', ')}]`);
  }
}

export function maskField(input: Record<string, unknown>, field: string, shape: readonly number[], against: string): Dense {
  const m = denseArray(input, field, shape.length, { allowBool: true });
  sameShape(field, m, shape, against);
  m.data.forEach((x, i) => {
    if (x !== 0 && x !== 1) throw new InputError(`field "${field}": element ${i} is ${x}; a mask holds 0 or 1`);
  });
  return m;
}

/** Nested arrays from a flat buffer, for JSON output. */
export function nest(data: ArrayLike<number>, shape: readonly number[]): unknown {
  if (shape.length === 0) return data[0];
  const [n, ...rest] = shape;
  const stride = rest.reduce((a, b) => a * b, 1);
  return Array.from({ length: n }, (_, i) => nest(Array.prototype.slice.call(data, i * stride, (i + 1) * stride), rest));
}

/** A JSON object of named inputs, as `npm run kernel` reads it. */
export type JsonInput = Record<string, unknown>;

/** The (B,T) tensors most kernels take, all checked against the first one's shape. */
export function bt(be: Backend, input: JsonInput, fields: string[]): { shape: number[]; tensors: Tensor[] } {
  const first = denseArray(input, fields[0], 2);
  const tensors = [be.tensor(first.data, first.shape)];
  for (const f of fields.slice(1)) {
    const d = denseArray(input, f, 2);
    sameShape(f, d, first.shape, fields[0]);
    tensors.push(be.tensor(d.data, d.shape));
  }
  return { shape: first.shape, tensors };
}

/** The `mask` field, (B,T) of 0 or 1 like `against`. */
export function maskTensor(be: Backend, input: JsonInput, shape: number[], against: string): Tensor {
  const m = maskField(input, 'mask', shape, against);
  return be.tensor(m.data, m.shape);
}

/** The `scores` field, one per sequence (B). */
export function scoresTensor(be: Backend, input: JsonInput, B: number): Tensor {
  const s: Dense = denseArray(input, 'scores', 1);
  if (s.shape[0] !== B) throw new InputError(`field "scores": length ${s.shape[0]} does not match the batch size ${B}`);
  return be.tensor(s.data, s.shape);
}

/** Reads the named tensors back (one readback) as nested arrays under the same names. */
export async function jsonOutputs(be: Backend, named: Record<string, Tensor>): Promise<Record<string, unknown>> {
  const names = Object.keys(named);
  const values = await be.readMany(names.map((n) => named[n]));
  const result: Record<string, unknown> = {};
  names.forEach((n, i) => {
    result[n] = nest(values[i], named[n].shape);
  });
  return result;
}
