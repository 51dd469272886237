import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { decodeSafetensors, encodeSafetensors, type SafeTensor } from '../../src/model/safetensors.ts';
import { Rng } from '../../src/util/rng.ts';

function sample(): SafeTensor[] {
  const r = new Rng(11);
  const w = new Float32Array(3 * 5).map(() => r.normal());
  w[0] = -0;
  w[1] = 1e-45; // subnormal
  w[2] = Infinity;
  w[3] = -Infinity;
  w[4] = NaN;
  return [
    { name: 'wte', dtype: 'F32', shape: [3, 5], data: w },
    { name: 'vocab.ids', dtype: 'I32', shape: [4], data: Int32Array.from([0, -1, 2147483647, -2147483648]) },
    { name: 'scalar', dtype: 'F32', shape: [], data: Float32Array.from([0.1]) },
    { name: 'empty', dtype: 'F32', shape: [0, 7], data: new Float32Array(0) },
    // F64 (trainer state): a value f32 cannot hold, the smallest subnormal, −0 and NaN bit-exact
    { name: 'state.m', dtype: 'F64', shape: [5], data: Float64Array.from([0.1, 5e-324, -0, NaN, -1e300]) },
  ];
}

function bitsOf(a: Float32Array | Int32Array | Float64Array): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

/** Builds a file from a hand-written header object and data bytes, for the rejection tests. */
function rawFile(header: unknown, data: Uint8Array, headerText?: string): Uint8Array {
  const json = new TextEncoder().encode(headerText ?? JSON.stringify(header));
  const out = new Uint8Array(8 + json.length + data.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(json.length), true);
  out.set(json, 8);
  out.set(data, 8 + json.length);
  return out;
}

describe('safetensors encode/decode', () => {
  it('round-trips tensors bit-exactly (signed zero, subnormal, ±Inf, NaN) with metadata', () => {
    const ts = sample();
    const meta = { format: 'pt', alphabet: '0123456789+=', task: 'arithmetic' };
    const bytes = encodeSafetensors(ts, meta);
    const back = decodeSafetensors(bytes);
    expect(back.metadata).toEqual(meta);
    expect([...back.tensors.keys()].sort()).toEqual(ts.map((t) => t.name).sort());
    for (const t of ts) {
      const d = back.tensors.get(t.name)!;
      expect(d.dtype).toBe(t.dtype);
      expect(d.shape).toEqual(t.shape);
      expect(d.data.constructor).toBe(t.data.constructor);
      expect(bitsOf(d.data)).toEqual(bitsOf(t.data));
    }
  });

  it('writes the documented layout: u64 LE header length, 8-aligned space-padded JSON, LE data', () => {
    const bytes = encodeSafetensors([{ name: 'x', dtype: 'I32', shape: [2], data: Int32Array.from([1, 258]) }], {});
    const n = Number(new DataView(bytes.buffer).getBigUint64(0, true));
    expect(n % 8).toBe(0);
    const headerText = new TextDecoder().decode(bytes.subarray(8, 8 + n));
    expect(headerText.trimEnd().length).toBeLessThanOrEqual(n);
    expect(/^ *$/.test(headerText.slice(headerText.trimEnd().length))).toBe(true);
    expect(JSON.parse(headerText)).toEqual({ x: { dtype: 'I32', shape: [2], data_offsets: [0, 8] } });
    expect([...bytes.subarray(8 + n)]).toEqual([1, 0, 0, 0, 2, 1, 0, 0]);
  });

  it('decodes from a subarray view with a nonzero byteOffset', () => {
    const bytes = encodeSafetensors(sample(), { k: 'v' });
    const padded = new Uint8Array(bytes.length + 3);
    padded.set(bytes, 3);
    const back = decodeSafetensors(padded.subarray(3));
    expect(bitsOf(back.tensors.get('wte')!.data)).toEqual(bitsOf(sample()[0].data));
  });

  it('refuses to encode inconsistent tensors', () => {
    expect(() => encodeSafetensors([{ name: 'a', dtype: 'F32', shape: [2, 2], data: new Float32Array(3) }])).toThrow(/shape \[2,2\] holds 4 elements but data has 3/);
    expect(() => encodeSafetensors([{ name: 'a', dtype: 'F32', shape: [1], data: new Int32Array(1) }])).toThrow(/dtype F32 needs a Float32Array/);
    const t: SafeTensor = { name: 'a', dtype: 'F32', shape: [1], data: new Float32Array(1) };
    expect(() => encodeSafetensors([t, t])).toThrow(/duplicate tensor name "a"/);
    expect(() => encodeSafetensors([{ ...t, name: '__metadata__' }])).toThrow(/reserved/);
  });
});

describe('safetensors rejects malformed files with a clear error', () => {
  const good = encodeSafetensors(sample(), { a: 'b' });
  const four = new Uint8Array(4);

  it('truncated: shorter than the length prefix', () => {
    expect(() => decodeSafetensors(good.subarray(0, 5))).toThrow(/truncated.*5 bytes/);
  });
  it('truncated: header runs past the end', () => {
    const n = Number(new DataView(good.buffer).getBigUint64(0, true));
    expect(() => decodeSafetensors(good.subarray(0, 8 + n - 1))).toThrow(/truncated: header length/);
  });
  it('truncated: data section cut short', () => {
    expect(() => decodeSafetensors(good.subarray(0, good.length - 4))).toThrow(/out of range/);
  });
  it('bad header length (absurdly large or too small)', () => {
    const huge = good.slice();
    new DataView(huge.buffer).setBigUint64(0, 0xffff_ffff_ffffn, true);
    expect(() => decodeSafetensors(huge)).toThrow(/bad header length/);
    const tiny = good.slice();
    new DataView(tiny.buffer).setBigUint64(0, 1n, true);
    expect(() => decodeSafetensors(tiny)).toThrow(/bad header length 1/);
  });
  it('invalid JSON, and JSON that is not an object', () => {
    expect(() => decodeSafetensors(rawFile(null, four, '{"x": {'))).toThrow(/not valid JSON/);
    expect(() => decodeSafetensors(rawFile(null, four, '[1, 2]'))).toThrow(/not a JSON object/);
    expect(() => decodeSafetensors(rawFile(null, four, '{"x": 1}'))).toThrow(/header entry is not an object/);
  });
  it('unsupported dtype', () => {
    const f = rawFile({ x: { dtype: 'F16', shape: [2], data_offsets: [0, 4] } }, four);
    expect(() => decodeSafetensors(f)).toThrow(/tensor "x": unsupported dtype "F16"/);
  });
  it('offsets out of range or reversed', () => {
    const past = rawFile({ x: { dtype: 'F32', shape: [2], data_offsets: [0, 8] } }, four);
    expect(() => decodeSafetensors(past)).toThrow(/tensor "x": data_offsets \[0, 8\] out of range \(data section is 4 bytes\)/);
    const rev = rawFile({ x: { dtype: 'F32', shape: [0], data_offsets: [4, 0] } }, four);
    expect(() => decodeSafetensors(rev)).toThrow(/out of range/);
    const neg = rawFile({ x: { dtype: 'F32', shape: [1], data_offsets: [-4, 0] } }, four);
    expect(() => decodeSafetensors(neg)).toThrow(/invalid data_offsets/);
  });
  it('overlapping offsets', () => {
    const f = rawFile(
      {
        a: { dtype: 'F32', shape: [2], data_offsets: [0, 8] },
        b: { dtype: 'I32', shape: [2], data_offsets: [4, 12] },
      },
      new Uint8Array(12),
    );
    expect(() => decodeSafetensors(f)).toThrow(/"a" and "b" have overlapping data_offsets/);
  });
  it('shape / byte-count mismatch and invalid shapes', () => {
    const f = rawFile({ x: { dtype: 'F32', shape: [3], data_offsets: [0, 8] } }, new Uint8Array(8));
    expect(() => decodeSafetensors(f)).toThrow(/shape \[3\] of F32 needs 12 bytes but data_offsets span 8/);
    const g = rawFile({ x: { dtype: 'F32', shape: [1.5], data_offsets: [0, 4] } }, four);
    expect(() => decodeSafetensors(g)).toThrow(/invalid shape/);
  });
  it('non-string metadata values', () => {
    const f = rawFile({ __metadata__: { step: 3 } }, new Uint8Array(0));
    expect(() => decodeSafetensors(f)).toThrow(/__metadata__ "step" is not a string/);
  });
});

const READER = fileURLToPath(new URL('../../scripts/read_safetensors.py', import.meta.url));

function hasPython(): boolean {
  try {
    execFileSync('python3', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe.runIf(hasPython())('scripts/read_safetensors.py (stdlib-only Python reader)', () => {
  it('prints the metadata, names, dtypes, shapes and first values of a file we wrote', () => {
    const dir = mkdtempSync(join(tmpdir(), 'safetensors-'));
    try {
      const path = join(dir, 'model.safetensors');
      const w = Float32Array.from([0.1, -2.5, 3e-7, 1234.5678, 9]);
      const ids = Int32Array.from([-7, 0, 2147483647]);
      writeFileSync(
        path,
        encodeSafetensors(
          [
            { name: 'h.0.w', dtype: 'F32', shape: [5, 1], data: w },
            { name: 'ids', dtype: 'I32', shape: [3], data: ids },
          ],
          { task: 'stop', alphabet: 'ab' },
        ),
      );
      const out = execFileSync('python3', [READER, path, '--head', '4'], { encoding: 'utf8' });
      const lines = out.trim().split('\n');
      expect(lines.slice(0, 2)).toEqual(['metadata alphabet = ab', 'metadata task = stop']);
      const parse = (line: string) => {
        const m = /^tensor (\S+) (F32|I32) (\[[^\]]*\]) \[(.*)\]$/.exec(line);
        expect(m, line).not.toBeNull();
        return { name: m![1], dtype: m![2], shape: JSON.parse(m![3]), values: m![4].split(', ').map(Number) };
      };
      const [a, b] = lines.slice(2).map(parse);
      expect(lines.length).toBe(4);
      expect(a).toEqual({ name: 'h.0.w', dtype: 'F32', shape: [5, 1], values: [...w.slice(0, 4)] });
      expect(b).toEqual({ name: 'ids', dtype: 'I32', shape: [3], values: [...ids] });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
