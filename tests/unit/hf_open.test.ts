// Opening model folders: fresh synthetic folders of every family (BF16/F16/F32, one file or shards,
// GPT-2 with and without "transformer."), read through memory, disk and File objects; and every bad
// folder refused by name before any weight is read.
import { mkdtempSync, rmSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileListFolder } from '../../src/model/hf/browserFolder.ts';
import { decodeToF32 } from '../../src/model/hf/dtype.ts';
import { MemoryFolder } from '../../src/model/hf/folder.ts';
import { openHfFolder } from '../../src/model/hf/open.ts';
import { readWeightF16, readWeightF32 } from '../../src/model/hf/readWeights.ts';
import { encodeHfSafetensors } from '../../src/model/hf/safetensorsWrite.ts';
import { BAD_FOLDERS, synthesizeToMemory, SYNTHETIC_FAMILIES, writeSynthetic, type SyntheticSpec } from '../../src/model/hf/synthetic.ts';
import { headWeight, weight } from '../../src/model/hf/weights.ts';
import { NodeFolder, nodeFolderSink } from '../../src/node/hfFolder.ts';
import { rng } from '../helpers/random.ts';

const seed = () => rng(7).nextU32();

describe('openHfFolder on synthetic folders of every family', () => {
  for (const family of SYNTHETIC_FAMILIES) {
    for (const [dtype, shards] of [
      ['BF16', 1],
      ['F32', 3],
      ['F16', 2],
    ] as const) {
      it(`${family} ${dtype}, ${shards} file(s)`, async () => {
        const spec: SyntheticSpec = { family, dtype, shards, seed: seed() };
        const folder = await synthesizeToMemory(spec);
        const info = await openHfFolder(folder);
        const a = info.arch;
        expect(a.family).toBe(family === 'llama3' ? 'llama' : family);
        expect(info.weightFiles).toHaveLength(shards);
        // every canonical weight is present, with its dtype, and nothing the family does not have
        const names = [...info.weights.byName.keys()];
        expect(names).toContain('embed');
        expect(names).toContain('layers.1.o');
        expect(names.includes('lmHead')).toBe(!a.tiedHead);
        expect(names.includes('positions')).toBe(family === 'gpt2');
        expect(names.includes('layers.0.qNorm')).toBe(family === 'qwen3');
        expect(names.includes('layers.0.qBias')).toBe(family === 'qwen2');
        expect(names.includes('layers.0.qkv')).toBe(family === 'gpt2');
        for (const w of info.weights.byName.values()) expect(w.dtype).toBe(dtype);
        expect(info.weights.ignored).toEqual([]);
        expect(headWeight(info.weights).shape).toEqual([a.vocab, a.dModel]);
        if (family === 'qwen3') expect(a.nHead * a.headDim).not.toBe(a.dModel);
        if (family === 'llama3') expect(a.rope!.scaling!.type).toBe('llama3');
        // orientation: Conv1D (in, out) for GPT-2, nn.Linear (out, in) for the others
        const o = weight(info.weights, 'layers.0.o');
        expect(o.layout).toBe(family === 'gpt2' ? 'inOut' : 'outIn');
        expect(info.generation.eosTokenIds).toHaveLength(2);
        expect(info.tokenizerConfig.chatTemplate).toContain('<|im_start|>');
      });
    }
  }

  it('GPT-2 keys without "transformer." and with old attn.bias buffers: the buffers are ignored', async () => {
    const info = await openHfFolder(await synthesizeToMemory({ family: 'gpt2', dtype: 'F32', shards: 1, seed: seed(), gpt2Prefix: false, gpt2MaskBuffers: true }));
    expect(info.weights.prefix).toBe('');
    expect(weight(info.weights, 'layers.0.qkv').key).toBe('h.0.attn.c_attn.weight');
    expect(info.weights.ignored).toEqual(['h.0.attn.bias', 'h.1.attn.bias']);
    const withPrefix = await openHfFolder(await synthesizeToMemory({ family: 'gpt2', dtype: 'F32', shards: 1, seed: seed() }));
    expect(weight(withPrefix.weights, 'layers.0.qkv').key).toBe('transformer.h.0.attn.c_attn.weight');
  });

  it('reads a weight whole or by rows, from its own byte range, exactly as stored', async () => {
    const folder = await synthesizeToMemory({ family: 'qwen3', dtype: 'BF16', shards: 2, seed: seed() });
    const info = await openHfFolder(folder);
    const e = weight(info.weights, 'embed');
    const bytes = folder.files.get(e.file)!.subarray(e.begin, e.end);
    const all = await readWeightF32(folder, e);
    expect(all).toEqual(decodeToF32(bytes, 'BF16'));
    const rows = await readWeightF32(folder, e, { start: 5, end: 9 });
    expect(rows).toEqual(all.subarray(5 * info.arch.dModel, 9 * info.arch.dModel));
    await expect(readWeightF32(folder, e, { start: 0, end: info.arch.vocab + 1 })).rejects.toThrow(/rows \[0, 385\) are outside its 384 rows/);
    // BF16 → F16 bits for the f16 upload path: exact for these (normal, in range) values
    const h = await readWeightF16(folder, e, { start: 0, end: 2 });
    const back = decodeToF32(new Uint8Array(h.buffer), 'F16');
    expect(back).toEqual(all.subarray(0, 2 * info.arch.dModel));
  });

  it('a value beyond f16 range is refused by name on the f16 path and read fine as f32', async () => {
    const folder = await synthesizeToMemory({ family: 'llama', dtype: 'F32', shards: 1, seed: seed() });
    const info = await openHfFolder(folder);
    const w = weight(info.weights, 'layers.0.up');
    const file = folder.files.get(w.file)!;
    new DataView(file.buffer, file.byteOffset + w.begin + 4 * 3, 4).setFloat32(0, 1e5, true);
    await expect(readWeightF16(folder, w)).rejects.toThrow(
      /model\.safetensors: tensor model\.layers\.0\.mlp\.up_proj\.weight holds 1 value\(s\) beyond float16's range ±65504 \(first: 100000 at element 3\)/,
    );
    expect((await readWeightF32(folder, w))[3]).toBe(100000);
  });
});

describe('openHfFolder refuses bad folders by name, before reading any weight', () => {
  const expected: Record<string, RegExp> = {
    t5: /^config\.json: T5ForConditionalGeneration is an encoder-decoder/,
    truncated: /^model\.safetensors: tensor model\.norm\.weight ends at byte \d+ but the file has \d+ bytes$/,
    'wrong-hidden': /^config\.json says hidden_size 80 but model\.embed_tokens\.weight is \[384, 64\] \(expected \[384, 80\]\)$/,
    'no-tokenizer': /^tokenizer\.json is missing from synthetic-qwen3/,
    quantized: /quantization_config \(gptq\)/,
    'sliding-window': /sliding-window attention is not supported/,
    moe: /num_experts = 8: mixture-of-experts/,
    yarn: /rope_scaling type "yarn" is not supported; supported: none\/default, llama3/,
  };
  for (const bad of BAD_FOLDERS) {
    it(bad, async () => {
      const folder = await synthesizeToMemory({ family: 'qwen3', dtype: 'BF16', shards: 1, seed: seed(), bad });
      // a folder whose read() of a tensor range would throw: nothing beyond headers may be read
      const guarded = new MemoryFolder(folder.label, folder.files);
      const read = guarded.read.bind(guarded);
      guarded.read = async (n, s, e) => {
        if (n.endsWith('.safetensors') && e - s > 4096) throw new Error('read a tensor before validating');
        return read(n, s, e);
      };
      await expect(openHfFolder(guarded)).rejects.toThrow(expected[bad]);
    });
  }

  it('a truncated last shard is named; an index that lies is named', async () => {
    const sharded = await synthesizeToMemory({ family: 'gpt2', dtype: 'F32', shards: 3, seed: seed(), bad: 'truncated' });
    await expect(openHfFolder(sharded)).rejects.toThrow(/^model-00003-of-00003\.safetensors: tensor transformer\.ln_f\.bias ends at byte \d+ but the file has \d+ bytes$/);
    const folder = await synthesizeToMemory({ family: 'llama', dtype: 'F32', shards: 2, seed: seed() });
    const index = JSON.parse(new TextDecoder().decode(folder.files.get('model.safetensors.index.json')!));
    index.weight_map['model.norm.weight'] = 'model-00001-of-00002.safetensors';
    folder.setJson('model.safetensors.index.json', index);
    await expect(openHfFolder(folder)).rejects.toThrow('model.safetensors.index.json maps model.norm.weight to model-00001-of-00002.safetensors but that file has no such tensor');
    index.weight_map['model.norm.weight'] = 'model-00009-of-00009.safetensors';
    folder.setJson('model.safetensors.index.json', index);
    await expect(openHfFolder(folder)).rejects.toThrow(
      'model.safetensors.index.json names model-00009-of-00009.safetensors (for model.norm.weight) but the folder has no such file',
    );
  });

  it('a missing tensor, pickle weights, no config, a wrong vocab_size and a tokenizer larger than the vocabulary', async () => {
    const base = await synthesizeToMemory({ family: 'llama', dtype: 'F32', shards: 1, seed: seed() });
    const info = await openHfFolder(base);
    const d = info.arch.dModel;
    const mk = (tensors: Parameters<typeof encodeHfSafetensors>[0]) => {
      const f = new MemoryFolder('m', base.files);
      f.files.set('model.safetensors', encodeHfSafetensors(tensors));
      return f;
    };
    await expect(openHfFolder(mk([{ key: 'model.embed_tokens.weight', dtype: 'F32', shape: [384, d], values: new Float64Array(384 * d) }]))).rejects.toThrow(
      'model.safetensors: tensor model.layers.0.input_layernorm.weight is missing',
    );
    const untied = await synthesizeToMemory({ family: 'llama', dtype: 'F32', shards: 1, seed: seed() });
    const hdr = await openHfFolder(untied);
    expect(hdr.arch.tiedHead).toBe(false);
    const noHead = new MemoryFolder('m', untied.files);
    const cfg = JSON.parse(new TextDecoder().decode(noHead.files.get('config.json')!));
    // a tied checkpoint opened with a config that says untied: the separate head is missing
    const tied = await synthesizeToMemory({ family: 'llama', dtype: 'F32', shards: 1, seed: seed(), tied: true });
    tied.setJson('config.json', cfg);
    await expect(openHfFolder(tied)).rejects.toThrow(/tensor lm_head\.weight is missing \(config\.json says tie_word_embeddings false/);

    const pickle = new MemoryFolder(
      'p',
      [...base.files].filter(([n]) => n !== 'model.safetensors'),
    );
    pickle.files.set('pytorch_model.bin', new Uint8Array(16));
    await expect(openHfFolder(pickle)).rejects.toThrow(/pytorch_model\.bin: only safetensors weights are read/);
    const noConfig = new MemoryFolder(
      'nc',
      [...base.files].filter(([n]) => n !== 'config.json'),
    );
    await expect(openHfFolder(noConfig)).rejects.toThrow(/^config\.json is missing from nc/);
    const small = new MemoryFolder('s', base.files);
    small.setJson('config.json', { ...cfg, vocab_size: 300 });
    await expect(openHfFolder(small)).rejects.toThrow(/config\.json says vocab_size 300 but model\.embed_tokens\.weight is \[384, 64\]/);
    const bigTok = new MemoryFolder('t', base.files);
    const tj = JSON.parse(new TextDecoder().decode(base.files.get('tokenizer.json')!));
    tj.added_tokens.push({ id: 500, content: '<|extra|>', special: true, single_word: false, lstrip: false, rstrip: false, normalized: false });
    bigTok.setJson('tokenizer.json', tj);
    await expect(openHfFolder(bigTok)).rejects.toThrow('tokenizer.json has token id 500 but config.json says vocab_size 384');
  });

  it('a used tensor stored as I8 (a quantised file without quantization_config) is refused naming the dtype', async () => {
    const base = await synthesizeToMemory({ family: 'gpt2', dtype: 'F32', shards: 1, seed: seed() });
    const info = await openHfFolder(base);
    const file = base.files.get('model.safetensors')!;
    // rewrite one entry's dtype in place: F32 [D] → I8 [4D] spans the same bytes
    const hdrLen = Number(new DataView(file.buffer, file.byteOffset, 8).getBigUint64(0, true));
    const header = JSON.parse(new TextDecoder().decode(file.subarray(8, 8 + hdrLen)));
    const key = weight(info.weights, 'layers.1.postNorm').key;
    header[key] = { ...header[key], dtype: 'I8', shape: [4 * info.arch.dModel] };
    let json = JSON.stringify(header);
    json = json.padEnd(hdrLen, ' ');
    expect(json.length).toBe(hdrLen);
    const patched = new Uint8Array(file);
    patched.set(new TextEncoder().encode(json), 8);
    const f = new MemoryFolder('q', base.files);
    f.files.set('model.safetensors', patched);
    await expect(openHfFolder(f)).rejects.toThrow(/config\.json says n_embd 64 but transformer\.h\.1\.ln_2\.weight is \[256\]/);
    // I32 [D] spans the same bytes as F32 [D] and has the right shape: the dtype alone is refused
    header[key] = { ...header[key], dtype: 'I32', shape: [info.arch.dModel] };
    json = JSON.stringify(header).padEnd(hdrLen, ' ');
    patched.set(new TextEncoder().encode(json), 8);
    await expect(openHfFolder(f)).rejects.toThrow(
      'model.safetensors: tensor transformer.h.1.ln_2.weight has dtype I32; supported: BF16, F16, F32 (quantised or integer weights are not)',
    );
  });
});

describe('folders on disk and from File objects', { timeout: 60_000 }, () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('NodeFolder reads what nodeFolderSink wrote, identical to the in-memory folder; a truncated file is named', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hf-folder-'));
    dirs.push(dir);
    const spec: SyntheticSpec = { family: 'qwen2', dtype: 'BF16', shards: 2, seed: seed() };
    await writeSynthetic(spec, await nodeFolderSink(dir), 1000);
    const mem = await synthesizeToMemory(spec);
    const disk = new NodeFolder(dir);
    expect(await disk.list()).toEqual(await mem.list());
    for (const n of await mem.list()) expect(await disk.read(n, 0, (await disk.size(n))!)).toEqual(mem.files.get(n));
    const info = await openHfFolder(disk);
    expect(await readWeightF32(disk, weight(info.weights, 'layers.1.down'))).toEqual(await readWeightF32(mem, weight(info.weights, 'layers.1.down')));
    const last = info.weightFiles[1].name;
    truncateSync(join(dir, last), info.weightFiles[1].bytes - 10);
    await expect(openHfFolder(new NodeFolder(dir))).rejects.toThrow(
      new RegExp(`^${last.replace(/\./g, '\\.')}: tensor lm_head\\.weight ends at byte \\d+ but the file has \\d+ bytes`),
    );
    await expect(disk.read('config.json', 0, 1e9)).rejects.toThrow(/config\.json: cannot read bytes \[0, 1000000000\) of a file of \d+ bytes/);
  });

  it('FileListFolder keeps the picked folder’s own files (webkitRelativePath "dir/name") and reads ranges', async () => {
    const mem = await synthesizeToMemory({ family: 'gpt2', dtype: 'F16', shards: 1, seed: seed() });
    const files: File[] = [];
    for (const [n, b] of mem.files) {
      const f = new File([b.slice()], n);
      Object.defineProperty(f, 'webkitRelativePath', { value: `my-model/${n}` });
      files.push(f);
    }
    const nested = new File([new Uint8Array(3)], 'x.json');
    Object.defineProperty(nested, 'webkitRelativePath', { value: 'my-model/sub/x.json' });
    const folder = new FileListFolder([...files, nested], 'my-model');
    expect(await folder.list()).toEqual(await mem.list());
    const info = await openHfFolder(folder);
    expect(await readWeightF32(folder, weight(info.weights, 'embed'), { start: 3, end: 4 })).toEqual(await readWeightF32(mem, weight(info.weights, 'embed'), { start: 3, end: 4 }));
  });
});
