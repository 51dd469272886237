// What `npm run logprobs` and `npm run generate` share: the flags that open a model folder, and
// opening it — config, weights' headers, tokenizer, then the weights uploaded to the backend. Every
// refusal on the way (a missing tokenizer.json, an unsupported architecture, a truncated
// safetensors file, a hidden size its weights do not have) is one line naming the file or field,
// a run the GPU cannot hold (the memory plan, made before any upload), is one line naming the
// file, field or limit, and the command exits 2 without a stack.
import { existsSync, statSync } from 'node:fs';
import type { Backend } from '../backend/backend.ts';
import type { WeightDType } from '../model/hf/deviceWeights.ts';
import { HfModel } from '../model/hf/hfModel.ts';
import { type LoadRun, MemoryRefusal, SMALLEST_RUN } from '../model/hf/loadPlan.ts';
import { type HfFolderInfo, openHfFolder } from '../model/hf/open.ts';
import { HfTokenizer } from '../model/hf/tokenizer.ts';
import { headWeight } from '../model/hf/weights.ts';
import { type PeftAdapter, readPeftAdapter, uploadPeftAdapter } from '../model/hf/peftAdapter.ts';
import { makeBackend } from '../node/backend.ts';
import { NodeFolder } from '../node/hfFolder.ts';

/** The parseArgs options both commands take. */
export const MODEL_OPTIONS = {
  model: { type: 'string' },
  prompt: { type: 'string' },
  chat: { type: 'boolean', default: false },
  backend: { type: 'string', default: 'webgpu' },
  weights: { type: 'string' },
  'gpu-memory': { type: 'string' },
  adapter: { type: 'string' },
} as const;

export const MODEL_USAGE = '--model DIR --prompt TEXT [--chat] [--adapter DIR] [--backend webgpu|cpu] [--weights f16|f32] [--gpu-memory GiB]';

/** Bad input named in one line: the command prints it and exits 2. */
export class InputRefusal extends Error {}

export interface OpenedModel {
  info: HfFolderInfo;
  tokenizer: HfTokenizer;
  model: HfModel;
  /** The arithmetic the numbers carry: float64 (CPU backend, f32 weights), f32 (WebGPU), or f16 (f16 weights). */
  precision: 'float64' | 'f32' | 'f16';
  /** --gpu-memory in bytes, or null when not given. */
  memoryBytes: number | null;
}

/**
 * The weights' dtype on the device: --weights when given; else f16 on WebGPU for a folder stored in
 * 16 bits (BF16/F16: half the memory, the values a float16 holds), f32 otherwise.
 */
function weightDType(flag: string | undefined, be: Backend, info: HfFolderInfo): WeightDType {
  if (flag !== undefined) {
    if (flag !== 'f16' && flag !== 'f32') throw new InputRefusal(`--weights must be f16 or f32, got ${JSON.stringify(flag)}`);
    return flag;
  }
  return be.kind === 'webgpu' && headWeight(info.weights).dtype !== 'F32' ? 'f16' : 'f32';
}

/** --gpu-memory GiB: what the GPU has (WebGPU does not report it); the memory plan checks the run against it. */
function gpuMemoryBytes(flag: string | undefined): number | null {
  if (flag === undefined) return null;
  const gib = Number(flag);
  if (!(Number.isFinite(gib) && gib > 0)) throw new InputRefusal(`--gpu-memory must be a positive number of GiB, got ${JSON.stringify(flag)}`);
  return Math.round(gib * 2 ** 30);
}

export interface ModelFlags {
  model?: string;
  backend?: string;
  weights?: string;
  'gpu-memory'?: string;
  adapter?: string;
}

/** The memory plan's refusal as one line: the plan's verdict and the flags that lower what it counts. */
function memoryRefusalLine(e: MemoryRefusal, dtype: WeightDType): string {
  const f16 = dtype === 'f32' ? '; --weights f16 halves the dense weights' : '';
  return `${e.message} Flags: a shorter --prompt, --response or --max-new-tokens lowers the length${f16}; --gpu-memory GiB states the GPU's memory.`;
}

/**
 * Opens --model on --backend and uploads it for one row of `run(tokenizer)` tokens (the memory plan
 * is checked before the upload); every refusal becomes an InputRefusal naming what is wrong.
 */
export async function openModel(values: ModelFlags, run: (tokenizer: HfTokenizer, info: HfFolderInfo) => LoadRun = () => SMALLEST_RUN): Promise<OpenedModel> {
  const dir = values.model!;
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new InputRefusal(`--model: no folder at ${dir}`);
  const backend = values.backend ?? 'webgpu';
  if (backend !== 'webgpu' && backend !== 'cpu') throw new InputRefusal(`--backend must be webgpu or cpu, got ${JSON.stringify(backend)}`);
  const folder = new NodeFolder(dir);
  let info: HfFolderInfo;
  let tokenizer: HfTokenizer;
  try {
    info = await openHfFolder(folder);
    tokenizer = new HfTokenizer(info.tokenizerJson, info.tokenizerConfig, info.generation);
  } catch (e) {
    throw new InputRefusal(e instanceof Error ? e.message : String(e));
  }
  const memoryBytes = gpuMemoryBytes(values['gpu-memory']);
  const loadRun = run(tokenizer, info);
  const be = await makeBackend(backend);
  const dtype = weightDType(values.weights, be, info);
  let model: HfModel;
  try {
    model = await HfModel.load(be, folder, info, dtype, { run: loadRun, memoryBytes });
  } catch (e) {
    if (e instanceof MemoryRefusal) throw new InputRefusal(memoryRefusalLine(e, dtype));
    const message = e instanceof Error ? e.message : String(e);
    throw new InputRefusal(message.includes("beyond float16's range") ? `${message} (--weights f32)` : message);
  }
  if (values.adapter !== undefined) await attachAdapter(model, info, values.adapter);
  const precision = dtype === 'f16' ? 'f16' : be.kind === 'cpu' ? 'float64' : 'f32';
  return { info, tokenizer, model, precision, memoryBytes };
}

/** --adapter DIR: a PEFT LoRA adapter folder on the same base, checked and put on the model's projections. */
async function attachAdapter(model: HfModel, info: HfFolderInfo, dir: string): Promise<void> {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new InputRefusal(`--adapter: no folder at ${dir}`);
  let adapter: PeftAdapter;
  try {
    adapter = await readPeftAdapter(new NodeFolder(dir), info.arch);
  } catch (e) {
    throw new InputRefusal(`--adapter: ${e instanceof Error ? e.message : String(e)}`);
  }
  model.setAdapters(uploadPeftAdapter(model.be, adapter, info.arch.nLayer));
}

/** The prompt's ids: one user turn through the chat template with the generation prompt (--chat), or the text as tokenizer(text) encodes it. */
export function promptIds(tokenizer: HfTokenizer, text: string, chat: boolean, where = '--prompt'): number[] {
  knownText(tokenizer, text, where);
  try {
    return chat ? tokenizer.encodeChat(text) : tokenizer.encode(text, { addSpecialTokens: true });
  } catch (e) {
    throw new InputRefusal(`--chat: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** Refuses text with characters the vocabulary has no token for: the model would read another text (the ids of what remains). */
export function knownText(tokenizer: HfTokenizer, text: string, flag: string): void {
  const unknown = tokenizer.unknownChars(text);
  if (unknown.length > 0) throw new InputRefusal(`${flag}: the model has no token for ${unknown.map((c) => `“${c}”`).join(', ')}; it would read the text without them`);
}

/** Runs a command body: an InputRefusal prints `<command>: message` and gives exit status 2. */
export async function refusingBadInput(command: string, body: () => Promise<number>): Promise<number> {
  try {
    return await body();
  } catch (e) {
    if (!(e instanceof InputRefusal)) throw e;
    console.error(`npm run ${command}: ${e.message}`);
    return 2;
  }
}
