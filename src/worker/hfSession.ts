// The visitor's own Hugging Face model in the worker, beside the PPO trainer: a folder opened
// (src/model/hf/open.ts: every refusal names the file or field), checked against the memory plan,
// its weights read range by range and uploaded with progress, then sampled from with the KV cache.
// Nothing here touches the trainer; a refusal leaves the page's run as it was. Errors become the
// reply's `refusal`, so the page shows them beside the folder picker, not as a failed run.
import type { Backend, GpuOpsHost } from '../backend/backend.ts';
import { parameterCount } from '../model/hf/arch.ts';
import type { WeightDType } from '../model/hf/deviceWeights.ts';
import type { ModelFolder } from '../model/hf/folder.ts';
import { generate } from '../model/hf/hfGenerate.ts';
import { HfModel } from '../model/hf/hfModel.ts';
import { type AdapterOffer, planMemory } from '../model/hf/memoryPlan.ts';
import { type HfFolderInfo, openHfFolder } from '../model/hf/open.ts';
import { HfTokenizer } from '../model/hf/tokenizer.ts';
import { headWeight } from '../model/hf/weights.ts';
import { SAMPLE_VOCAB_MAX_EOS, SAMPLE_VOCAB_MAX_K } from '../ops/sampleVocab.ts';
import { type HfTrainRequest, type HfTrainTarget, HfTraining } from './hfTraining.ts';
import type { HfGenerateRequest, HfModelSummary, HfSample } from './hfTypes.ts';
import type { WorkerToPage } from './protocol.ts';

/** Tokens the memory plan reserves for one sample (prompt + response), at most the model's positions. */
const PLANNED_TOKENS = 512;
/** Progress messages per load, at most (a bar, not a log). */
const PROGRESS_STEPS = 50;

export interface HfSessionDeps {
  post(msg: WorkerToPage, transfer?: Transferable[]): void;
  /** The device's limits as the memory plan reads them (tests pass a small adapter's). */
  offer?(be: Backend, dtype: WeightDType): AdapterOffer;
  now?(): number;
}

/** What a WebGPU device offers (limits requested at acquisition); the CPU backend is unbounded. */
export function deviceOffer(be: Backend, dtype: WeightDType): AdapterOffer {
  if (be.kind !== 'webgpu') {
    return { maxBufferSize: Number.MAX_SAFE_INTEGER, maxStorageBufferBindingSize: Number.MAX_SAFE_INTEGER, maxStorageBuffersPerShaderStage: 1 << 20, shaderF16: dtype === 'f16' };
  }
  const l = (be as GpuOpsHost).rt.device.limits;
  return {
    maxBufferSize: l.maxBufferSize,
    maxStorageBufferBindingSize: l.maxStorageBufferBindingSize,
    maxStorageBuffersPerShaderStage: l.maxStorageBuffersPerShaderStage,
    shaderF16: dtype === 'f16',
  };
}

/**
 * f16 on WebGPU for a folder stored in 16 bits (BF16/F16: half the memory; the kernels widen to f32),
 * f32 otherwise: as `npm run generate` chooses.
 */
export function weightDTypeFor(be: Backend, info: HfFolderInfo): WeightDType {
  return be.kind === 'webgpu' && headWeight(info.weights).dtype !== 'F32' ? 'f16' : 'f32';
}

/** A folder that counts the bytes read from its safetensors files (the weights), for the progress bar. */
class CountingFolder implements ModelFolder {
  constructor(
    private readonly inner: ModelFolder,
    private readonly onRead: (bytes: number) => void,
  ) {}
  get label(): string {
    return this.inner.label;
  }
  list(): Promise<string[]> {
    return this.inner.list();
  }
  size(name: string): Promise<number | null> {
    return this.inner.size(name);
  }
  async read(name: string, start: number, end: number): Promise<Uint8Array> {
    const bytes = await this.inner.read(name, start, end);
    if (name.endsWith('.safetensors')) this.onRead(bytes.length);
    return bytes;
  }
}

/** Characters named in a message, each in quotes. */
const quotedChars = (cs: readonly string[]) => cs.map((c) => `“${c}”`).join(', ');

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

interface Opened {
  info: HfFolderInfo;
  tokenizer: HfTokenizer;
  model: HfModel;
  summary: HfModelSummary;
}

export class HfSession {
  private opened: Opened | null = null;
  private readonly training: HfTraining;

  constructor(private readonly deps: HfSessionDeps) {
    this.training = new HfTraining(
      (msg) => deps.post(msg),
      (be, dtype) => (deps.offer ?? deviceOffer)(be, dtype),
    );
  }

  private get target(): HfTrainTarget | null {
    const o = this.opened;
    return o ? { model: o.model, tokenizer: o.tokenizer, label: o.summary.label } : null;
  }

  /** LoRA training of the opened model (hfTraining.ts). */
  train(req: HfTrainRequest, requestId: number): Promise<void> {
    return this.training.train(this.target, req, requestId);
  }

  /** Ends a training run before its next iteration (not queued). */
  stopTraining(): void {
    this.training.stop();
  }

  loadAdapter(files: { config: string; weights: Uint8Array; state?: Uint8Array }, requestId: number): Promise<void> {
    return this.training.loadAdapter(this.target, files, requestId);
  }

  exportAdapter(requestId: number, trainingState = false): Promise<void> {
    return this.training.exportAdapter(this.target, requestId, trainingState);
  }

  get summary(): HfModelSummary | null {
    return this.opened?.summary ?? null;
  }

  /** Opens `folder` on `be`, replacing the model held before once the new one passed its checks. */
  async open(be: Backend, folder: ModelFolder, requestId: number): Promise<void> {
    // A refusal says which model is still held (a refusal before the upload keeps the earlier one).
    const reply = (body: { model?: HfModelSummary; refusal?: string }) =>
      this.deps.post({ type: 'hfOpened', requestId, ...(body.refusal !== undefined && this.summary ? { model: this.summary } : {}), ...body });
    let info: HfFolderInfo;
    let tokenizer: HfTokenizer;
    try {
      info = await openHfFolder(folder);
      tokenizer = new HfTokenizer(info.tokenizerJson, info.tokenizerConfig, info.generation);
    } catch (e) {
      return reply({ refusal: message(e) });
    }
    const dtype = weightDTypeFor(be, info);
    const a = info.arch;
    const tokens = Math.min(PLANNED_TOKENS, a.maxPositions);
    const plan = planMemory(
      a,
      { batch: 1, promptTokens: Math.max(1, tokens >> 1), responseTokens: tokens - Math.max(1, tokens >> 1), trainBatch: 0, lora: null, valueHead: false },
      (this.deps.offer ?? deviceOffer)(be, dtype),
    );
    if (!plan.fits) return reply({ refusal: plan.message });

    this.close(); // the earlier model's memory goes before the new one's comes
    const total = info.weightBytes;
    let done = 0;
    let lastStep = -1;
    const progress = (n: number) => {
      done = Math.min(total, done + n);
      const step = Math.floor((done / Math.max(1, total)) * PROGRESS_STEPS);
      if (step !== lastStep) {
        lastStep = step;
        this.deps.post({ type: 'hfProgress', requestId, doneBytes: done, totalBytes: total });
      }
    };
    progress(0);
    let model: HfModel;
    try {
      model = await HfModel.load(be, new CountingFolder(folder, progress), info, dtype);
    } catch (e) {
      return reply({ refusal: message(e) });
    }
    const g = info.generation;
    const summary: HfModelSummary = {
      label: folder.label,
      architecture: a.architecture,
      nLayer: a.nLayer,
      dModel: a.dModel,
      nHead: a.nHead,
      nKvHead: a.nKvHead,
      vocab: a.vocab,
      maxPositions: a.maxPositions,
      parameters: parameterCount(a),
      deviceBytes: model.weights.bytes,
      weightDtype: dtype,
      hasChatTemplate: tokenizer.hasChatTemplate,
      generation: { source: g.source, doSample: g.doSample, temperature: g.temperature, topP: g.topP, topK: g.topK, maxNewTokens: g.maxNewTokens, eosTokenIds: tokenizer.eosIds },
    };
    this.opened = { info, tokenizer, model, summary };
    reply({ model: summary });
  }

  /** Samples one response; a request the model cannot take is refused, naming the setting and its range. */
  async generate(req: HfGenerateRequest, requestId: number): Promise<void> {
    const reply = (body: { sample?: HfSample; refusal?: string }) => this.deps.post({ type: 'hfGenerated', requestId, ...body });
    const o = this.opened;
    if (!o) return reply({ refusal: 'no model is open: pick a folder first' });
    let sample: HfSample;
    try {
      sample = await this.sample(o, req);
    } catch (e) {
      return reply({ refusal: message(e) });
    }
    reply({ sample });
  }

  private async sample(o: Opened, req: HfGenerateRequest): Promise<HfSample> {
    const { tokenizer, model, info } = o;
    const maxPos = model.arch.maxPositions;
    if (!Number.isInteger(req.maxNewTokens) || req.maxNewTokens < 1 || req.maxNewTokens > maxPos) {
      throw new Error(`max new tokens must be an integer in [1, ${maxPos}], got ${req.maxNewTokens}`);
    }
    if (!req.greedy && !(Number.isFinite(req.temperature) && req.temperature > 0 && req.temperature <= 10)) {
      throw new Error(`temperature must be in (0, 10], got ${req.temperature}`);
    }
    if (!req.greedy && !(Number.isFinite(req.topP) && req.topP > 0 && req.topP <= 1)) throw new Error(`top-p must be in (0, 1], got ${req.topP}`);
    const promptText = req.chat ? tokenizer.renderChat(req.prompt) : req.prompt;
    const promptIds = req.chat ? tokenizer.encode(promptText, { addSpecialTokens: false }) : tokenizer.encode(promptText, { addSpecialTokens: true });
    const unknownChars = tokenizer.unknownChars(req.prompt);
    // Typed text the model sees none of (only the template's or BOS's tokens would remain): refused, naming why.
    if (unknownChars.length > 0 && tokenizer.encode(req.prompt, { addSpecialTokens: false }).length === 0)
      throw new Error(`the prompt tokenizes to no token: the model has no token for ${quotedChars(unknownChars)}`);
    if (promptIds.length === 0) throw new Error('the prompt tokenizes to no token: write a prompt');
    if (promptIds.length + req.maxNewTokens > maxPos) {
      throw new Error(`${promptIds.length} prompt tokens + ${req.maxNewTokens} new exceed the model's max_position_embeddings ${maxPos}: lower max new tokens`);
    }
    const g = info.generation;
    const topK = g.topK >= model.vocab ? 0 : g.topK;
    if (!req.greedy && topK > SAMPLE_VOCAB_MAX_K) throw new Error(`${g.source}: top_k ${g.topK} exceeds the sampler's ${SAMPLE_VOCAB_MAX_K}; choose greedy decoding`);
    const eosIds = tokenizer.eosIds;
    if (eosIds.length > SAMPLE_VOCAB_MAX_EOS) throw new Error(`${g.source}: ${eosIds.length} eos_token_id values exceed the sampler's ${SAMPLE_VOCAB_MAX_EOS}`);
    const now = this.deps.now ?? (() => performance.now());
    const t0 = now();
    const out = await generate(model, [promptIds], {
      maxNewTokens: req.maxNewTokens,
      greedy: req.greedy,
      temperature: req.temperature,
      topP: req.topP,
      topK,
      seed: req.seed >>> 0,
      eosIds,
      padId: tokenizer.padId ?? g.padTokenId ?? eosIds[0] ?? 0,
    });
    const ids = out.tokens[0];
    return {
      promptIds,
      promptText,
      ...(unknownChars.length > 0 ? { unknownChars } : {}),
      tokens: ids.map((id, i) => ({ id, text: tokenizer.tokenText(id), logprob: out.logprobs[0][i], special: tokenizer.isSpecial(id) })),
      text: tokenizer.decode(ids, { skipSpecialTokens: true }),
      stopped: out.finished[0] ? 'eos' : 'max_new_tokens',
      greedy: req.greedy,
      seconds: (now() - t0) / 1000,
    };
  }

  /** Frees the model's device memory (and a trained adapter's). */
  close(): void {
    this.training.dropActor(this.opened?.model);
    this.opened?.model.dispose();
    this.opened = null;
  }

  /** The device went: the model's buffers went with it (nothing to free); the page opens it again. */
  forgetDevice(): void {
    this.training.forgetDevice();
    this.opened = null;
  }
}
