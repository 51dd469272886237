// An independent read of BF16 shards: Python + numpy (a process, so this is a `cli` test) against
// openHfFolder/readWeightF32 on the same synthetic folder. `npm test` installs python3-numpy.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openHfFolder } from '../../src/model/hf/open.ts';
import { readWeightF32 } from '../../src/model/hf/readWeights.ts';
import { writeSynthetic } from '../../src/model/hf/synthetic.ts';
import { NodeFolder, nodeFolderSink } from '../../src/node/hfFolder.ts';
import { rng } from '../helpers/random.ts';

const seed = () => rng(7).nextU32();

describe('sharded BF16 weights through another reader', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('an independent reader (Python + numpy, bf16 bits << 16) sees the same shards, keys, shapes and values', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hf-numpy-'));
    dirs.push(dir);
    await writeSynthetic({ family: 'qwen3', dtype: 'BF16', shards: 2, seed: seed() }, await nodeFolderSink(dir));
    const py = [
      'import json, struct, sys, numpy as np, os',
      'd = sys.argv[1]; idx = json.load(open(os.path.join(d, "model.safetensors.index.json")))',
      'out = {}',
      'for key, f in sorted(idx["weight_map"].items()):',
      '    raw = open(os.path.join(d, f), "rb").read(); n = struct.unpack("<Q", raw[:8])[0]',
      '    h = json.loads(raw[8:8 + n]); e = h[key]; b, t = e["data_offsets"]',
      '    u = np.frombuffer(raw[8 + n + b:8 + n + t], dtype="<u2").astype(np.uint32) << 16',
      '    out[key] = {"shape": e["shape"], "dtype": e["dtype"], "head": u.view(np.float32)[:6].tolist(), "sum": float(u.view(np.float32).astype(np.float64).sum())}',
      'print(json.dumps(out))',
    ].join('\n');
    const r = spawnSync('python3', ['-c', py, dir], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    const seen = JSON.parse(r.stdout) as Record<string, { shape: number[]; dtype: string; head: number[]; sum: number }>;
    const disk = new NodeFolder(dir);
    const info = await openHfFolder(disk);
    expect(Object.keys(seen).length).toBe(info.weights.byName.size);
    for (const w of info.weights.byName.values()) {
      const mine = await readWeightF32(disk, w);
      expect(seen[w.key].shape).toEqual(w.shape);
      expect(seen[w.key].dtype).toBe('BF16');
      expect(Array.from(mine.subarray(0, 6))).toEqual(seen[w.key].head);
      expect(mine.reduce((s, x) => s + x, 0)).toBeCloseTo(seen[w.key].sum, 6);
    }
  });
});
