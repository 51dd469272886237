// The fused decode step (shaders/decode_step.wgsl and decode_step_scratch.wgsl: embedding → every block with the KV cache →
// ln_f → tied head in one dispatch) against its float64 reference, composed of the per-op
// references, on fresh random weights, caches and masks, with the edge cases of decoding: the
// first and the last cache slot, a row whose only visible key is the new one, a fully masked row
// (attention output 0), out-of-range token ids and positions (clamped), extreme activations.
import { describe, expect, it } from 'vitest';
import { kvStride } from '../../src/reference/seq/decode.ts';
import { decodeModel } from '../../src/model/gptDecoder.ts';
import { Gpt } from '../../src/model/gpt.ts';
import { paramLayout } from '../../src/model/params.ts';
import { decodeStepRef } from '../../src/reference/seq/decode.ts';
import { decodeRows } from '../../src/ops/decodeStep.ts';
import type { Backend } from '../../src/backend/backend.ts';
import type { Tensor } from '../../src/backend/tensor.ts';
import { WebGpuBackend } from '../../src/backend/webgpu/webgpuBackend.ts';
import { cpuBackend, webgpuBackend } from '../helpers/backends.ts';
import { expectClose, randn, rng, TOL } from '../helpers/random.ts';
import { decodeStep } from '../../src/ops/decodeStep.ts';

const f32 = (x: ArrayLike<number>) => Float64Array.from(new Float32Array(x));

const CASES = [
  { name: '2 layers, 2 heads, D 32', nLayer: 2, nHead: 2, dModel: 32, vocab: 11, B: 5, Smax: 10, scale: 0.3 },
  { name: '3 layers, 4 heads, D 64, wide weights', nLayer: 3, nHead: 4, dModel: 64, vocab: 40, B: 3, Smax: 7, scale: 1.5 },
  { name: '1 layer, 1 head of 64, D 64', nLayer: 1, nHead: 1, dModel: 64, vocab: 5, B: 2, Smax: 4, scale: 0.5 },
  // The WebGPU kernel runs up to 4 rows per workgroup (decodeRows): 9 rows are groups of 4, 4, 1;
  // D 256 with 8 heads × 128 cache slots (the largest shape it takes) leaves room for two rows per
  // workgroup: 3 rows are groups of 2 and 1.
  { name: '2 layers, 4 heads, D 64, 9 rows', nLayer: 2, nHead: 4, dModel: 64, vocab: 33, B: 9, Smax: 12, scale: 0.5 },
  { name: '1 layer, 8 heads, D 256, Smax 128', nLayer: 1, nHead: 8, dModel: 256, vocab: 7, B: 3, Smax: 128, scale: 0.3 },
];

// On WebGPU both kernels run on whatever adapter the tests have: decode_step (wm in workgroup
// memory, for GPUs) and decode_step_scratch (wm in a storage buffer, for CPU adapters).
const RUNS: [string, () => Promise<Backend>, boolean | null][] = [
  ['webgpu, decode_step', webgpuBackend, false],
  ['webgpu, decode_step_scratch', webgpuBackend, true],
  ['cpu', async () => cpuBackend, null],
];

describe.each(RUNS)('fused decode step on %s', (_name, makeBackend, cpuAdapter) => {
  for (const c of CASES) {
    for (const which of ['first', 'middle', 'last'] as const) {
      it(`${c.name}: position ${which} matches the float64 reference and writes the caches`, async () => {
        const be = await makeBackend();
        const r = rng(700 + c.nLayer * 10 + c.dModel + (which === 'first' ? 0 : which === 'middle' ? 1 : 2));
        const { B, Smax, dModel: D, vocab: V } = c;
        const cfg = { vocabSize: V, nLayer: c.nLayer, nHead: c.nHead, dModel: D, maxSeq: Smax, head: 'lm' as const };
        const layout = paramLayout(cfg);
        const host = f32(randn(r, layout.total, c.scale));
        const model = new Gpt(be, cfg, host);
        const dm = decodeModel(model);
        const pos = which === 'first' ? 0 : which === 'last' ? Smax - 1 : r.int(1, Smax - 1);

        const seq = new Float64Array(B * Smax);
        const posns = new Float64Array(B * Smax);
        const mask = new Float64Array(B * Smax);
        for (let b = 0; b < B; b++) {
          for (let j = 0; j < Smax; j++) {
            seq[b * Smax + j] = r.int(0, V);
            posns[b * Smax + j] = j;
            mask[b * Smax + j] = r.uniform(0, 1) < 0.7 ? 1 : 0;
          }
          mask[b * Smax + pos] = 1;
        }
        // Row 0: only the new key is visible. Row 1: nothing visible (a finished row's PAD step).
        for (let j = 0; j < pos; j++) mask[0 * Smax + j] = 0;
        for (let j = 0; j <= pos; j++) mask[1 * Smax + j] = 0;
        // Out-of-range ids are clamped into the tables (last row).
        seq[(B - 1) * Smax + pos] = V + 3;
        posns[(B - 1) * Smax + pos] = which === 'first' ? -2 : Smax + 5;

        const stride = kvStride(B, Smax, D);
        const kvHost = f32(randn(r, 2 * c.nLayer * stride, 2));
        const tSeq = be.tensor(seq, [B, Smax], 'i32');
        const tPos = be.tensor(posns, [B, Smax], 'i32');
        const tMask = be.tensor(mask, [B, Smax]);
        const kv = be.tensor(kvHost, [2 * c.nLayer * stride]);
        const rt = be instanceof WebGpuBackend ? be.rt : null;
        const saved = rt?.cpuAdapter;
        if (rt && cpuAdapter !== null) rt.cpuAdapter = cpuAdapter;
        let logits: Tensor;
        try {
          logits = decodeStep(be, { params: model.params, model: dm, kv, sequences: tSeq, positions: tPos, attnMask: tMask, pos });
        } finally {
          if (rt && saved !== undefined) rt.cpuAdapter = saved;
        }
        expect(logits.shape).toEqual([B, V]);
        const [got, kvGot] = await be.readMany([logits, kv]);

        const kvRef = Float64Array.from(kvHost);
        const ref = decodeStepRef(host, dm, kvRef, seq, posns, mask, B, Smax, pos);
        // How far float32 rounding of the inputs alone moves the float64 reference: every weight and
        // cache entry times (1 ± u·2⁻²⁴), 4 draws, the largest move per element. Wide weights through
        // 3 layers make some draws ill-conditioned (a peaked softmax): there the reference itself
        // moves by ~5e-4 and no float32 kernel can be closer than that.
        const sensLogits = new Float64Array(ref.length);
        const sensKv = new Float64Array(kvRef.length);
        for (let draw = 0; draw < 4; draw++) {
          const u = rng(9000 + draw);
          const nudge = (v: number) => v * (1 + (2 * u.next() - 1) * 2 ** -24);
          const kvNudged = Float64Array.from(kvHost, nudge);
          const refNudged = decodeStepRef(Float64Array.from(host, nudge), dm, kvNudged, seq, posns, mask, B, Smax, pos);
          for (let i = 0; i < ref.length; i++) sensLogits[i] = Math.max(sensLogits[i], Math.abs(refNudged[i] - ref[i]));
          for (let i = 0; i < kvRef.length; i++) sensKv[i] = Math.max(sensKv[i], Math.abs(kvNudged[i] - kvRef[i]));
        }
        // float32 sums of D–4D products with cancellation: the absolute error follows the size of
        // the vector's entries, not of each (possibly tiny) result, so atol is taken relative to
        // the largest |reference| of the compared vector (a normwise float32 bound), plus 64× the
        // element's input sensitivity (the kernel rounds at every op; measured ≤ 31× over 5 seeds).
        const close = (a: Float64Array, e: Float64Array, sens: Float64Array, what: string) => {
          const scale = e.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
          const atol = Float64Array.from(sens, (s) => TOL.reduce.atol * Math.max(1, scale) + 64 * s);
          expectClose(a, e, TOL.reduce.rtol, atol, what);
        };
        close(got, ref, sensLogits, 'logits');
        // Position `pos` of every cache holds the new k, v; every other slot is untouched.
        for (let i = 0; i < kvRef.length; i++) {
          const slot = Math.floor((i % stride) / D) % Smax;
          if (i % stride < B * Smax * D && slot === pos) continue;
          if (kvGot[i] !== kvRef[i]) throw new Error(`kv[${i}] changed outside position ${pos}: ${kvGot[i]} vs ${kvRef[i]}`);
        }
        for (let cache = 0; cache < 2 * c.nLayer; cache++) {
          const slot = (v: Float64Array) => Float64Array.from({ length: B * D }, (_, i) => v[cache * stride + (Math.floor(i / D) * Smax + pos) * D + (i % D)]);
          close(slot(kvGot), slot(kvRef), slot(sensKv), `${cache % 2 ? 'v' : 'k'} cache of layer ${cache >> 1} at position ${pos}`);
        }
        be.dispose(logits, tSeq, tPos, tMask, kv);
        model.dispose();
      });
    }
  }

  it('the WebGPU kernel groups rows as the cases above intend (decodeRows)', () => {
    expect(CASES.map((c) => decodeRows(c.B, c.dModel, c.nHead, c.Smax))).toEqual([4, 3, 2, 4, 2]);
  });

  it('refuses a cache buffer of the wrong size and a position outside the cache, naming them', async () => {
    const be = await makeBackend();
    const cfg = { vocabSize: 7, nLayer: 1, nHead: 2, dModel: 32, maxSeq: 6, head: 'lm' as const };
    const model = new Gpt(be, cfg, 3);
    const dm = decodeModel(model);
    const B = 2,
      Smax = 6;
    const seq = be.zeros([B, Smax], 'i32');
    const pos = be.zeros([B, Smax], 'i32');
    const mask = be.zeros([B, Smax]);
    const bad = be.zeros([kvStride(B, Smax, 32)]);
    expect(() => decodeStep(be, { params: model.params, model: dm, kv: bad, sequences: seq, positions: pos, attnMask: mask, pos: 1 })).toThrow(/kv/);
    const kv = be.zeros([2 * kvStride(B, Smax, 32)]);
    expect(() => decodeStep(be, { params: model.params, model: dm, kv, sequences: seq, positions: pos, attnMask: mask, pos: Smax })).toThrow(/pos 6 outside/);
    be.dispose(seq, pos, mask, bad, kv);
    model.dispose();
  });
});

describe('the two WebGPU decode kernels', () => {
  it('decode_step and decode_step_scratch give the same bits: logits and cache writes (every case, a middle position)', async () => {
    const be = await webgpuBackend();
    const saved = be.rt.cpuAdapter;
    try {
      for (const c of CASES) {
        const r = rng(4100 + c.dModel + c.B);
        const { B, Smax, dModel: D, vocab: V } = c;
        const cfg = { vocabSize: V, nLayer: c.nLayer, nHead: c.nHead, dModel: D, maxSeq: Smax, head: 'lm' as const };
        const model = new Gpt(be, cfg, f32(randn(r, paramLayout(cfg).total, c.scale)));
        const dm = decodeModel(model);
        const pos = r.int(1, Smax - 1);
        const cells = B * Smax;
        const seq = be.tensor(
          Float64Array.from({ length: cells }, () => r.int(0, V)),
          [B, Smax],
          'i32',
        );
        const posns = be.tensor(
          Float64Array.from({ length: cells }, (_, i) => i % Smax),
          [B, Smax],
          'i32',
        );
        const mask = be.tensor(
          Float64Array.from({ length: cells }, (_, i) => (i % Smax === pos || r.uniform(0, 1) < 0.7 ? 1 : 0)),
          [B, Smax],
        );
        const kvHost = f32(randn(r, 2 * c.nLayer * kvStride(B, Smax, D), 2));
        const outs: Float64Array[][] = [];
        for (const cpuAdapter of [false, true]) {
          be.rt.cpuAdapter = cpuAdapter;
          const kv = be.tensor(kvHost, [kvHost.length]);
          const logits = decodeStep(be, { params: model.params, model: dm, kv, sequences: seq, positions: posns, attnMask: mask, pos });
          outs.push(await be.readMany([logits, kv]));
          be.dispose(logits, kv);
        }
        expect(outs[1][0], `${c.name}: logits`).toEqual(outs[0][0]);
        expect(outs[1][1], `${c.name}: caches`).toEqual(outs[0][1]);
        be.dispose(seq, posns, mask);
        model.dispose();
      }
    } finally {
      be.rt.cpuAdapter = saved;
    }
  });
});
