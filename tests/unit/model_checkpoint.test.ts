// Checkpoint round trips and rejections on the CPU reference backend (no kernels involved: only
// parameter storage, save and load).
import { describe, expect, it } from 'vitest';
import { CpuBackend } from '../../src/backend/cpu/cpuBackend.ts';
import { loadCheckpointInto, modelFromCheckpoint, parseCheckpoint, saveCheckpoint } from '../../src/model/checkpoint.ts';
import type { GptConfig } from '../../src/model/config.ts';
import { Gpt } from '../../src/model/gpt.ts';
import { encodeSafetensors, decodeSafetensors, type SafeTensor } from '../../src/model/safetensors.ts';
import { rng } from '../helpers/random.ts';
import { readFileSync } from 'node:fs';
import { getTask, taskTokenizer } from '../../src/tasks/index.ts';

const be = new CpuBackend();
const cfg: GptConfig = { vocabSize: 13, nLayer: 1, nHead: 2, dModel: 32, maxSeq: 12, head: 'lm' };
const info = { alphabet: '0123456789', task: 'arithmetic' };

async function flatOf(m: Gpt): Promise<Float64Array> {
  return be.read(m.params);
}

/** Re-encodes a checkpoint after editing its tensors / metadata. */
function edit(bytes: Uint8Array, f: (ts: SafeTensor[], meta: Record<string, string>) => void): Uint8Array {
  const d = decodeSafetensors(bytes);
  const ts: SafeTensor[] = [...d.tensors].map(([name, t]) => ({ name, dtype: t.dtype, shape: [...t.shape], data: t.data }));
  const meta = { ...d.metadata };
  f(ts, meta);
  return encodeSafetensors(ts, meta);
}

describe('checkpoints', () => {
  it('round-trips bit-exactly and carries config, alphabet, task', async () => {
    const seed = rng(1).int(0, 1e9);
    const a = new Gpt(be, cfg, seed);
    const bytes = await saveCheckpoint(a, info);
    expect(bytes.length).toBeLessThan(2_000_000);
    const parsed = parseCheckpoint(bytes);
    expect(parsed.config).toEqual(cfg);
    expect(parsed.alphabet).toBe(info.alphabet);
    expect(parsed.task).toBe(info.task);
    expect([...parsed.params.keys()]).toEqual(a.layout.entries.map((e) => e.name));

    const b = new Gpt(be, cfg, seed + 1);
    loadCheckpointInto(b, bytes, info);
    const fa = await flatOf(a);
    const fb = await flatOf(b);
    expect(Array.from(fb)).toEqual(Array.from(Float32Array.from(fa))); // float32 values, exactly
    expect(await saveCheckpoint(b, info)).toEqual(bytes); // byte-identical re-save
  });

  it('rejects bad files with a clear error and leaves the model untouched', async () => {
    const good = await saveCheckpoint(new Gpt(be, cfg, 7), info);
    const target = new Gpt(be, cfg, 8);
    const before = await flatOf(target);
    const cases: [string, Uint8Array, { alphabet: string; task?: string }, RegExp][] = [
      ['truncated', good.slice(0, good.length - 10), info, /truncated|out of range/],
      ['truncated header', good.slice(0, 20), info, /truncated/],
      ['wrong alphabet', good, { alphabet: '0123456789+' }, /alphabet/],
      ['wrong task', good, { ...info, task: 'stop' }, /task/],
      [
        'wrong shape',
        edit(good, (ts) => {
          const t = ts.find((x) => x.name === 'h.0.mlp.c_fc.weight')!;
          t.shape = [64, 64];
        }),
        info,
        /h\.0\.mlp\.c_fc\.weight.*shape/,
      ],
      [
        'missing tensor',
        edit(good, (ts) =>
          ts.splice(
            ts.findIndex((x) => x.name === 'ln_f.bias'),
            1,
          ),
        ),
        info,
        /missing parameter "ln_f\.bias"/,
      ],
      ['extra tensor', edit(good, (ts) => ts.push({ name: 'surprise', dtype: 'F32', shape: [1], data: new Float32Array(1) })), info, /unexpected parameter "surprise"/],
      ['other config', edit(good, (_ts, meta) => (meta.config = JSON.stringify({ ...cfg, maxSeq: 16 }))), info, /config/],
      ['non-finite value', edit(good, (ts) => (ts[0].data[3] = NaN)), info, /non-finite/],
      ['no metadata', edit(good, (_ts, meta) => delete meta.alphabet), info, /missing "alphabet"/],
      // Found by `npm run fuzz` (seed 20261124): valid JSON that is not an object crashed with a TypeError.
      ['config null', edit(good, (_ts, meta) => (meta.config = 'null')), info, /model config must be an object, got null/],
      ['config array', edit(good, (_ts, meta) => (meta.config = '[1,2]')), info, /model config must be an object/],
    ];
    for (const [what, bytes, expect_, re] of cases) {
      expect(() => loadCheckpointInto(target, bytes, expect_), what).toThrow(re);
      expect(Array.from(await flatOf(target)), what).toEqual(Array.from(before));
    }
  });

  it('starts a critic or reward model from an SFT checkpoint: trunk copied, head initialised', async () => {
    const sft = new Gpt(be, cfg, 3);
    const bytes = await saveCheckpoint(sft, info);
    const sftParams = await sft.readParams();
    for (const head of ['value', 'reward'] as const) {
      const { model, info: got } = modelFromCheckpoint(be, bytes, { head, seed: 11, ...info });
      expect(got.config.head).toBe(head);
      const ps = await model.readParams();
      for (const [name, v] of sftParams) expect(Array.from(ps.get(name)!), name).toEqual(Array.from(Float32Array.from(v)));
      const prefix = head === 'value' ? 'value_head' : 'reward_head';
      const w = ps.get(`${prefix}.weight`)!;
      if (head === 'value') expect(Array.from(w).every((x) => x === 0)).toBe(true);
      else expect(Array.from(w).some((x) => x !== 0)).toBe(true);
      expect(ps.get(`${prefix}.bias`)![0]).toBe(0);
      // and it saves / loads as its own kind of checkpoint
      const again = await saveCheckpoint(model, info);
      expect(parseCheckpoint(again).config.head).toBe(head);
    }
    expect(() => modelFromCheckpoint(be, bytes, { alphabet: 'abc' })).toThrow(/alphabet/);
  });

  it.each(['arithmetic', 'sentiment', 'stop'])('ships a loadable %s SFT checkpoint under 2 MB', (name) => {
    const bytes = new Uint8Array(readFileSync(new URL(`../../public/checkpoints/${name}.safetensors`, import.meta.url)));
    expect(bytes.length).toBeLessThan(2_000_000);
    const task = getTask(name);
    const { model, info: got } = modelFromCheckpoint(be, bytes, { alphabet: task.alphabet, task: name });
    expect(got.config).toMatchObject({ nLayer: 2, nHead: 2, dModel: 64, head: 'lm', vocabSize: taskTokenizer(task).vocabSize });
    expect(got.config.maxSeq).toBeGreaterThanOrEqual(1 + task.maxPromptChars + task.maxResponseChars + 1);
    model.dispose();
  });
});
