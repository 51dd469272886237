// `npm run kernel` input fuzzing: a valid input for each kernel, then every field mutated in type,
// shape (short, ragged, extra rank, empty), range (out-of-vocabulary tokens, masks of 2, negative
// γ, huge values) or removed. Inputs travel through JSON text exactly as the CLI reads them. An
// input must give an InputError naming the field, or outputs of the right shape that are finite
// whenever the inputs are moderate; after a refused input the backend must still answer a known
// input exactly as before.
import type { Backend } from '../backend/backend.ts';
import { GROUP_ESTIMATORS } from '../reference/groupAdvantages.ts';
import { KL_ESTIMATORS } from '../reference/kl.ts';
import { LOSS_AGGS } from '../reference/aggregate.ts';
import { InputError } from '../ops/kernelInput.ts';
import { GROUPED_ESTIMATORS } from '../reference/groupAdvantages.ts';
import { KERNEL_NAMES, runKernel } from '../ops/registry.ts';
import { Rng } from '../util/rng.ts';
import { chance, pick, randomString, randomValue, sketch, HOSTILE_STRINGS } from './gen.ts';
import { emptyReport, record, runCase, type CaseResult, type TargetReport } from './outcome.ts';

type Input = Record<string, unknown>;

const mat = (B: number, T: number, f: () => number): number[][] => Array.from({ length: B }, () => Array.from({ length: T }, f));
const vec = (B: number, f: (i: number) => number): number[] => Array.from({ length: B }, (_, i) => f(i));

/** A valid input for `kernel` with random B, T (and V). */
export function validKernelInput(rng: Rng, kernel: string): Input {
  const B = rng.int(1, 5);
  const T = rng.int(1, 7);
  const logp = () => -rng.uniform(0, 5);
  const m = () => mat(B, T, () => (chance(rng, 0.8) ? 1 : 0));
  switch (kernel) {
    case 'logprobs': {
      const V = rng.int(2, 7);
      return { logits: Array.from({ length: B }, () => mat(T, V, () => rng.normal() * 3)), tokens: mat(B, T, () => rng.int(0, V)), temperature: rng.uniform(0.1, 2) };
    }
    case 'kl':
      return { logprobs: mat(B, T, logp), ref_logprobs: mat(B, T, logp), estimator: pick(rng, KL_ESTIMATORS) };
    case 'shape_rewards':
      return {
        logprobs: mat(B, T, logp),
        ref_logprobs: mat(B, T, logp),
        mask: m(),
        scores: vec(B, () => rng.normal()),
        beta: rng.uniform(0, 1),
        estimator: pick(rng, KL_ESTIMATORS),
      };
    case 'gae':
      return { rewards: mat(B, T, () => rng.normal()), values: mat(B, T, () => rng.normal()), mask: m(), gamma: rng.uniform(0, 1), lam: rng.uniform(0, 1) };
    case 'whiten':
      return { values: mat(B, T, () => rng.normal()), mask: m(), shift_mean: chance(rng, 0.5) };
    case 'group_advantages': {
      const estimator = pick(rng, GROUP_ESTIMATORS);
      // Group estimators need two samples per group; reinforce and remax take any grouping.
      const grouped = GROUPED_ESTIMATORS.has(estimator);
      const G = grouped ? Math.max(1, Math.floor(B / 2)) : rng.int(1, B + 1);
      if (grouped && B < 2) return validKernelInput(rng, kernel);
      return {
        estimator,
        // remax subtracts a reward baseline per sequence (its greedy response's reward)
        ...(estimator === 'remax' ? { baselines: vec(B, () => rng.normal()) } : {}),
        scores: vec(B, () => rng.normal()),
        group: vec(B, (i) => i % G),
        logprobs: mat(B, T, logp),
        ref_logprobs: mat(B, T, logp),
        mask: m(),
        beta: rng.uniform(0, 0.5),
        kl_estimator: pick(rng, KL_ESTIMATORS),
        gamma: rng.uniform(0, 1),
      };
    }
    case 'policy_loss':
      return {
        old_logprobs: mat(B, T, logp),
        logprobs: mat(B, T, logp),
        advantages: mat(B, T, () => rng.normal()),
        mask: m(),
        clip_low: rng.uniform(0.05, 0.5),
        clip_high: rng.uniform(0.05, 0.5),
        clip_c: chance(rng, 0.5) ? rng.uniform(1.5, 5) : null,
        agg: pick(rng, LOSS_AGGS),
      };
    default:
      return {
        values: mat(B, T, () => rng.normal()),
        old_values: mat(B, T, () => rng.normal()),
        returns: mat(B, T, () => rng.normal()),
        mask: m(),
        clip: chance(rng, 0.5) ? rng.uniform(0.05, 1) : null,
        agg: pick(rng, LOSS_AGGS),
      };
  }
}

/** One mutation of one field (or of the whole input). */
export function mutateKernelInput(rng: Rng, input: Input): { input: unknown; what: string } {
  if (chance(rng, 0.03)) return { input: pick(rng, [null, [], 5, 'x', [input]]), what: 'not an object' };
  const keys = Object.keys(input);
  const field = chance(rng, 0.05) ? randomString(rng, 8) : pick(rng, keys);
  const v = input[field];
  const out: Input = { ...input };
  const kind = rng.int(0, 4);
  let what: string;
  if (kind === 0) {
    delete out[field];
    what = `${field} removed`;
  } else if (kind === 1) {
    out[field] = pick(rng, [null, true, 'x', 0, -1, 1e300, {}, [], [[[]]], pick(rng, HOSTILE_STRINGS), randomValue(rng, 0, true)]);
    what = `${field} = ${sketch(out[field], 40)}`;
  } else if (kind === 2 && Array.isArray(v)) {
    const a = JSON.parse(JSON.stringify(v)) as unknown[];
    const edits: (() => unknown)[] = [
      () => a.slice(1),
      () => [...a, a[0]],
      () => [],
      () => [[]],
      () => (Array.isArray(a[0]) ? [(a[0] as unknown[]).slice(1), ...a.slice(1)] : [[a[0]], ...a.slice(1)]), // ragged
      () => a.map((row) => [row]), // extra rank
      () => (Array.isArray(a[0]) ? a.flat() : a[0]), // lower rank
      () => (Array.isArray(a[0]) ? a.map((row) => [...(row as unknown[]), ...(row as unknown[])]) : a),
    ];
    out[field] = pick(rng, edits)();
    what = `${field} reshaped to ${sketch(out[field], 60)}`;
  } else {
    // Range: one element or the scalar itself at an edge.
    const edge = pick(rng, [-1, 2, 0.5, -0.5, 1e9, -1e9, 1e300, -1e300, 0, 1, 1.0000001, 100, -100, 2 ** 31, true, null]);
    if (Array.isArray(v)) {
      const a = JSON.parse(JSON.stringify(v)) as unknown[];
      const setFirst = (x: unknown): unknown => (Array.isArray(x) ? (x.length > 0 ? [setFirst(x[0]), ...x.slice(1)] : x) : edge);
      const all = (x: unknown): unknown => (Array.isArray(x) ? x.map(all) : edge);
      out[field] = chance(rng, 0.7) ? setFirst(a) : all(a);
    } else out[field] = typeof v === 'string' ? pick(rng, [v.toUpperCase(), `${v} `, '', 'k4', 'mean']) : edge;
    what = `${field} range edge ${sketch(edge)}`;
  }
  if (chance(rng, 0.05)) out[randomString(rng, 6)] = randomValue(rng, 0, true);
  return { input: out, what };
}

function numbers(x: unknown, acc: number[] = []): number[] {
  if (typeof x === 'number') acc.push(x);
  else if (Array.isArray(x)) for (const y of x) numbers(y, acc);
  else if (x && typeof x === 'object') for (const y of Object.values(x)) numbers(y, acc);
  return acc;
}

/** Largest |x| over the input's numbers: outputs must be finite when this is moderate. */
function magnitude(input: unknown): number {
  return numbers(input).reduce((m, x) => Math.max(m, Math.abs(x)), 0);
}

async function check(be: Backend, kernel: string, input: unknown): Promise<string | null> {
  const result = await runKernel(be, kernel, input as Input);
  const outs = numbers(result);
  if (outs.length === 0 && magnitude(input) > 0 && numbers(input).length > 0) {
    // Empty outputs are fine only for empty batches.
    if (!Object.values(result).every((v) => Array.isArray(v) || typeof v === 'number')) return `odd result ${sketch(result)}`;
  }
  if (magnitude(input) <= 1e3 && !outs.every(Number.isFinite)) return `non-finite output for moderate input: ${sketch(result, 160)}`;
  return null;
}

/** A kernel input error must be an InputError: anything else means the kernel was reached with bad data. */
function kernelVerdict(r: CaseResult, err: unknown): CaseResult {
  if (r.verdict === 'named' && !(err instanceof InputError)) return { verdict: 'crash', detail: `not an input error: ${(err as Error).message.slice(0, 200)}` };
  return r;
}

export async function fuzzKernels(rng: Rng, count: number, limitMs: number, be: Backend, label = be.label): Promise<TargetReport> {
  const rep = emptyReport(`kernels (${label})`);
  const probeInput = validKernelInput(new Rng(7), 'policy_loss');
  const probe = JSON.stringify(await runKernel(be, 'policy_loss', probeInput));
  for (let i = 0; i < count; i++) {
    const kernel = chance(rng, 0.02) ? pick(rng, ['', 'LOGPROBS', 'toString', randomString(rng)]) : pick(rng, KERNEL_NAMES);
    const base = validKernelInput(rng, KERNEL_NAMES.includes(kernel as never) ? kernel : 'kl');
    const { input, what } = chance(rng, 0.1) ? { input: base, what: 'valid' } : mutateKernelInput(rng, base);
    const parsed: unknown = JSON.parse(JSON.stringify(input)); // what the CLI would read
    let thrown: unknown;
    const r = await runCase(async () => {
      try {
        return await check(be, kernel, parsed);
      } catch (e) {
        thrown = e;
        throw e;
      }
    }, limitMs);
    record(rep, r.verdict === 'named' ? kernelVerdict(r, thrown) : r, `case ${i} ${kernel}: ${what}`);
    if (i % 50 === 49 || r.verdict !== 'ok') {
      const again = JSON.stringify(await runKernel(be, 'policy_loss', probeInput));
      if (again !== probe) record(rep, { verdict: 'invalid', detail: 'the backend answers a known input differently after this case' }, `case ${i} probe`);
    }
  }
  return rep;
}
