// npm run make-hf-folder: writes folders that open, bad folders that are refused, the playground's
// character model as GPT-2 (scored by npm run logprobs as the model itself scores), real shapes
// whose sizes are the published ones, and names a bad flag.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parameterCount } from '../../src/model/hf/arch.ts';
import { openHfFolder } from '../../src/model/hf/open.ts';
import { describeSynthetic, REAL_SHAPES } from '../../src/model/hf/synthetic.ts';
import { NodeFolder } from '../../src/node/hfFolder.ts';
import { CpuBackend } from '../../src/backend/cpu/cpuBackend.ts';
import { modelFromCheckpoint } from '../../src/model/checkpoint.ts';
import { CharTokenizer } from '../../src/model/tokenizer.ts';
import { charLogprobs } from '../helpers/charLogprobs.ts';

const run = (...args: string[]) => spawnSync('npx', ['tsx', 'src/cli/make_hf_folder.ts', ...args], { encoding: 'utf8', timeout: 60_000 });

describe('npm run make-hf-folder', { timeout: 120_000 }, () => {
  const root = mkdtempSync(join(tmpdir(), 'make-hf-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('writes a sharded Qwen3 folder that opens; a truncated one is refused by name', async () => {
    const dir = join(root, 'qwen3');
    const r = run('--family', 'qwen3', '--dtype', 'bf16', '--shards', '2', '--seed', '5', '--dims', 'layers=3,hidden=32,heads=4,kv=2,head_dim=12,ff=48', '--out', dir);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const info = await openHfFolder(new NodeFolder(dir));
    expect(info.arch).toMatchObject({ family: 'qwen3', nLayer: 3, dModel: 32, nHead: 4, nKvHead: 2, headDim: 12, dFf: 48 });
    expect(info.weightFiles.map((f) => f.name)).toEqual(['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors']);
    const bad = join(root, 'truncated');
    expect(run('--family', 'gpt2', '--no-prefix', '--bad', 'truncated', '--out', bad).status).toBe(0);
    await expect(openHfFolder(new NodeFolder(bad))).rejects.toThrow(/^model\.safetensors: tensor ln_f\.bias ends at byte \d+ but the file has \d+ bytes$/);
  });

  it('--from-checkpoint: the shipped arithmetic model as GPT-2, whose log-probs npm run logprobs gives as the character model computes them; a reward model is refused', async () => {
    const dir = join(root, 'arithmetic-gpt2');
    const file = 'public/checkpoints/arithmetic.safetensors';
    const r = run('--from-checkpoint', file, '--out', dir);
    expect(r.status).toBe(0);
    const info = await openHfFolder(new NodeFolder(dir));
    expect(info.arch).toMatchObject({ family: 'gpt2', nLayer: 2, dModel: 64, nHead: 2, tiedHead: true });
    const lp = spawnSync('npx', ['tsx', 'src/cli/logprobs.ts', '--model', dir, '--prompt', '12+34=', '--response', '46', '--backend', 'cpu'], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(lp.status).toBe(0);
    const out = JSON.parse(lp.stdout.trim().split('\n').at(-1)!) as { prompt_ids: number[]; response_ids: number[]; logprobs: number[] };
    const be = new CpuBackend();
    const { model, info: ck } = modelFromCheckpoint(be, new Uint8Array(readFileSync(file)));
    const tok = new CharTokenizer(ck.alphabet);
    expect(out.prompt_ids).toEqual(tok.encodePrompt('12+34='));
    expect(out.response_ids).toEqual(tok.encode('46'));
    const own = await charLogprobs(be, model, out.prompt_ids, out.response_ids);
    for (const [j, x] of own.entries()) expect(Math.abs(out.logprobs[j] - x)).toBeLessThan(1e-9);
    model.dispose();
    // a character outside its alphabet has no token: the scores would be another text's, so the text is refused naming it
    const unknown = spawnSync('npx', ['tsx', 'src/cli/logprobs.ts', '--model', dir, '--prompt', '12+34=', '--response', '46?', '--backend', 'cpu'], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain('--response: the model has no token for “?”; it would read the text without them');
    const rm = run('--from-checkpoint', 'public/checkpoints/sentiment_rm.safetensors', '--out', join(root, 'rm'));
    expect(rm.status).toBe(1);
    expect(rm.stderr).toContain('--from-checkpoint public/checkpoints/sentiment_rm.safetensors: only a model with the LM head is a GPT2LMHeadModel; this one has the reward head');
  });

  it('names a bad flag and prints its usage without --out', () => {
    const r = run('--family', 'qwen3', '--out', join(root, 'x'), '--dims', 'layers=0');
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('--dims: layers must be a positive integer, got "0"');
    expect(run('--family', 'mistral', '--out', join(root, 'y')).stderr).toContain('--family must be one of llama, llama3, qwen2, qwen3, gpt2, got "mistral"');
    const u = run('--family', 'qwen3');
    expect(u.status).toBe(2);
    expect(u.stderr).toMatch(/^usage: npm run make-hf-folder/);
  });
});

describe('real shapes (described, not written)', () => {
  it('SmolLM2-135M and Qwen3-0.6B have their published parameter counts; BF16 weights are 2 bytes each', () => {
    const smol = describeSynthetic({ family: REAL_SHAPES['smollm2-135m'].family, dtype: 'BF16', shards: 1, seed: 0, dims: REAL_SHAPES['smollm2-135m'].dims, tied: true });
    expect(parameterCount(smol.arch!)).toBe(134515008);
    expect(smol.weightBytes).toBe(2 * 134515008);
    const qwen = describeSynthetic({ family: 'qwen3', dtype: 'BF16', shards: 2, seed: 0, dims: REAL_SHAPES['qwen3-0.6b'].dims, tied: true });
    expect(parameterCount(qwen.arch!)).toBe(596049920);
    expect(qwen.weightBytes).toBe(2 * 596049920);
    expect(qwen.files.map((f) => f.name)).toEqual(['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors']);
  });
});
