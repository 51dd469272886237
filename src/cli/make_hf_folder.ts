// Writes a Hugging Face model folder with random weights from a seed (src/model/hf/synthetic.ts):
// the test folders of every family, the bad folders a loader must refuse, and random models at real
// shapes for the bench, streamed to disk block by block.
//   npm run make-hf-folder -- --family llama|llama3|qwen2|qwen3|gpt2 --out DIR
//        [--dtype bf16|f16|f32] [--shards N] [--seed N] [--tied|--untied] [--no-prefix] (GPT-2: bare keys)
//        [--dims layers=2,hidden=64,heads=4,kv=2,head_dim=16,ff=128,vocab=384,positions=128]
//        [--shape smollm2-135m|qwen3-0.6b] (real shapes; overrides --family and --dims)
//        [--bad t5|truncated|wrong-hidden|no-tokenizer|quantized|sliding-window|moe|yarn]
//   npm run make-hf-folder -- --from-checkpoint FILE.safetensors --out DIR
//        the playground's character model of a checkpoint (public/checkpoints/, an SFT or PPO
//        download) as the GPT-2 folder it is (src/model/hf/charModelFolder.ts)
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { checkpointFolderFiles } from '../model/hf/charModelFolder.ts';
import { DTYPE_BYTES, type HfDtype } from '../model/hf/dtype.ts';
import {
  BAD_FOLDERS,
  describeSynthetic,
  REAL_SHAPES,
  SYNTHETIC_FAMILIES,
  writeSynthetic,
  type BadFolder,
  type SyntheticDims,
  type SyntheticFamily,
  type SyntheticSpec,
} from '../model/hf/synthetic.ts';
import { nodeFolderSink } from '../node/hfFolder.ts';
import { runCli } from '../node/runCli.ts';

const USAGE = `usage: npm run make-hf-folder -- --family <${SYNTHETIC_FAMILIES.join('|')}> --out DIR [--dtype bf16|f16|f32] [--shards N] [--seed N] [--tied|--untied] [--no-prefix] [--dims k=v,…] [--shape ${Object.keys(REAL_SHAPES).join('|')}] [--bad ${BAD_FOLDERS.join('|')}]
       npm run make-hf-folder -- --from-checkpoint FILE.safetensors --out DIR`;

const DIM_KEYS: Record<string, keyof SyntheticDims> = {
  layers: 'nLayer',
  hidden: 'dModel',
  heads: 'nHead',
  kv: 'nKvHead',
  head_dim: 'headDim',
  ff: 'dFf',
  vocab: 'vocab',
  positions: 'maxPositions',
};

/** "--dims layers=2,hidden=64" → partial dims; a bad key or value names itself and the allowed keys. */
export function parseDims(text: string): Partial<SyntheticDims> {
  const out: Partial<SyntheticDims> = {};
  for (const part of text.split(',').filter((p) => p.trim() !== '')) {
    const [k, v] = part.split('=').map((s) => s.trim());
    const key = DIM_KEYS[k];
    if (!key) throw new Error(`--dims: unknown key ${JSON.stringify(k)}; allowed: ${Object.keys(DIM_KEYS).join(', ')}`);
    if (!/^\d+$/.test(v ?? '') || Number(v) < 1) throw new Error(`--dims: ${k} must be a positive integer, got ${JSON.stringify(v)}`);
    out[key] = Number(v);
  }
  return out;
}

function oneOf<T extends string>(flag: string, v: string, allowed: readonly T[]): T {
  if (!allowed.includes(v as T)) throw new Error(`--${flag} must be one of ${allowed.join(', ')}, got ${JSON.stringify(v)}`);
  return v as T;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      family: { type: 'string' },
      out: { type: 'string' },
      dtype: { type: 'string', default: 'bf16' },
      shards: { type: 'string', default: '1' },
      seed: { type: 'string', default: '1' },
      tied: { type: 'boolean' },
      untied: { type: 'boolean' },
      'no-prefix': { type: 'boolean' },
      dims: { type: 'string' },
      shape: { type: 'string' },
      bad: { type: 'string' },
      'from-checkpoint': { type: 'string' },
    },
  });
  const checkpoint = values['from-checkpoint'];
  if (values.out && checkpoint !== undefined) {
    let files: Map<string, Uint8Array>;
    try {
      files = checkpointFolderFiles(new Uint8Array(await readFile(checkpoint)));
    } catch (e) {
      throw new Error(`--from-checkpoint ${checkpoint}: ${(e as Error).message}`);
    }
    const sink = await nodeFolderSink(values.out);
    for (const [name, bytes] of files) await sink.writeFile(name, bytes);
    console.log(`make-hf-folder: the character model of ${checkpoint} as GPT2LMHeadModel → ${values.out}\nwrote ${[...files.keys()].join(', ')}`);
    return 0;
  }
  if (!values.out || (!values.family && !values.shape)) {
    console.error(USAGE);
    return 2;
  }
  const dtype = oneOf('dtype', values.dtype!.toUpperCase(), ['BF16', 'F16', 'F32'] as const) as HfDtype;
  const shards = Number(values.shards);
  if (!Number.isInteger(shards) || shards < 1) throw new Error(`--shards must be a positive integer, got ${values.shards}`);
  const seed = Number(values.seed);
  if (!Number.isInteger(seed) || seed < 0) throw new Error(`--seed must be a non-negative integer, got ${values.seed}`);
  if (values.tied && values.untied) throw new Error('--tied and --untied exclude each other');
  let spec: SyntheticSpec;
  if (values.shape) {
    const shape = REAL_SHAPES[oneOf('shape', values.shape, Object.keys(REAL_SHAPES))];
    spec = { family: shape.family, dtype, shards, seed, dims: shape.dims, tied: shape.tied };
  } else {
    spec = { family: oneOf('family', values.family!, SYNTHETIC_FAMILIES) as SyntheticFamily, dtype, shards, seed, dims: parseDims(values.dims ?? '') };
    if (values.tied || values.untied) spec.tied = !!values.tied;
  }
  if (values['no-prefix']) spec.gpt2Prefix = false;
  if (values.bad) spec.bad = oneOf('bad', values.bad, BAD_FOLDERS) as BadFolder;

  const desc = describeSynthetic(spec);
  const gb = desc.weightBytes / 1e9;
  console.log(
    `make-hf-folder ${spec.family} ${dtype} (${DTYPE_BYTES[dtype]} B/value), ${desc.files.length} weight file(s), ${(desc.weightBytes / 1e6).toFixed(1)} MB of weights${gb > 1 ? ` (${gb.toFixed(2)} GB, streamed)` : ''}${spec.bad ? `, bad: ${spec.bad}` : ''} → ${values.out}`,
  );
  const written = await writeSynthetic(spec, await nodeFolderSink(values.out));
  console.log(`wrote ${written.join(', ')}`);
  return 0;
}

runCli(main);
