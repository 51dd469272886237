// The worker's session for the visitor's own model, on the float64 CPU backend: a fresh synthetic
// folder opens (progress counted up to the weights' bytes), samples through the chat template with
// its tokens' ids, texts and log-probs; bad folders and a model that does not fit are refused by
// name as the reply, leaving the model held before in place; bad sampling settings are named.
import { describe, expect, it } from 'vitest';
import { CpuBackend } from '../../src/backend/cpu/cpuBackend.ts';
import { FileListFolder } from '../../src/model/hf/browserFolder.ts';
import type { DType, Tensor } from '../../src/backend/tensor.ts';
import { MemoryFolder, type ModelFolder } from '../../src/model/hf/folder.ts';
import { synthesizeToMemory, type BadFolder } from '../../src/model/hf/synthetic.ts';
import { HfTokenizer } from '../../src/model/hf/tokenizer.ts';
import { openHfFolder } from '../../src/model/hf/open.ts';
import { HfSession } from '../../src/worker/hfSession.ts';
import type { HfGenerateRequest } from '../../src/worker/hfTypes.ts';
import type { WorkerToPage } from '../../src/worker/protocol.ts';
import { rng } from '../helpers/random.ts';
import { charModelFolderFiles } from '../../src/model/hf/charModelFolder.ts';
import type { GptConfig } from '../../src/model/config.ts';
import { paramLayout } from '../../src/model/params.ts';
import { CharTokenizer } from '../../src/model/tokenizer.ts';

const seed = () => rng(31).nextU32();
/** A character model of the playground's arithmetic alphabet (zero weights: only its tokenizer matters here). */
const CHAR_CFG: GptConfig = { vocabSize: new CharTokenizer('0123456789+=').vocabSize, nLayer: 1, nHead: 2, dModel: 16, maxSeq: 16, head: 'lm' };

function session(offer?: ConstructorParameters<typeof HfSession>[0]['offer']) {
  const posted: WorkerToPage[] = [];
  const s = new HfSession({ post: (m) => posted.push(m), offer, now: () => 0 });
  const last = <T extends WorkerToPage['type']>(type: T) => posted.filter((m) => m.type === type).at(-1) as Extract<WorkerToPage, { type: T }> | undefined;
  return { s, posted, last };
}

const REQ: HfGenerateRequest = { prompt: '12+7=', chat: true, greedy: false, temperature: 0.8, topP: 0.9, maxNewTokens: 6, seed: 3 };

describe('HfSession', () => {
  it('opens a folder given as File objects, with progress, and samples with tokens the tokenizer agrees with', async () => {
    const mem = await synthesizeToMemory({ family: 'qwen3', dtype: 'BF16', shards: 2, seed: seed() }, 'tiny-qwen3');
    const files = [...mem.files].map(([name, bytes]) => new File([bytes.slice()], name));
    const { s, posted, last } = session();
    const be = new CpuBackend();
    await s.open(be, new FileListFolder(files, 'tiny-qwen3'), 1);
    const opened = last('hfOpened')!;
    expect(opened.refusal).toBeUndefined();
    expect(opened.requestId).toBe(1);
    const m = opened.model!;
    expect(m).toMatchObject({ label: 'tiny-qwen3', architecture: 'Qwen3ForCausalLM', hasChatTemplate: true, weightDtype: 'f32' });
    const info = await openHfFolder(mem);
    const progress = posted.filter((p) => p.type === 'hfProgress') as Extract<WorkerToPage, { type: 'hfProgress' }>[];
    expect(progress.length).toBeGreaterThan(1);
    expect(progress.every((p) => p.totalBytes === info.weightBytes)).toBe(true);
    expect(progress.at(-1)!.doneBytes).toBe(info.weightBytes);
    for (let i = 1; i < progress.length; i++) expect(progress[i].doneBytes).toBeGreaterThanOrEqual(progress[i - 1].doneBytes);

    await s.generate(REQ, 2);
    const g = last('hfGenerated')!;
    expect(g.refusal).toBeUndefined();
    const sample = g.sample!;
    const tok = new HfTokenizer(info.tokenizerJson, info.tokenizerConfig, info.generation);
    expect(sample.promptIds).toEqual(tok.encodeChat(REQ.prompt));
    expect(sample.promptText).toBe(tok.renderChat(REQ.prompt));
    expect(sample.tokens.length).toBeGreaterThan(0);
    expect(sample.tokens.length).toBeLessThanOrEqual(REQ.maxNewTokens);
    for (const t of sample.tokens) {
      expect(t.text).toBe(tok.tokenText(t.id));
      expect(t.logprob).toBeLessThanOrEqual(0);
      expect(Number.isFinite(t.logprob)).toBe(true);
    }
    expect(sample.text).toBe(
      tok.decode(
        sample.tokens.map((t) => t.id),
        { skipSpecialTokens: true },
      ),
    );
    expect(sample.greedy).toBe(false);
    expect(sample.stopped === 'eos').toBe(tok.eosIds.includes(sample.tokens.at(-1)!.id));
  });

  const MESSAGES: [BadFolder, RegExp][] = [
    ['t5', /^config\.json: T5ForConditionalGeneration is an encoder-decoder/],
    ['truncated', /^model\.safetensors: tensor .* ends at byte \d+ but the file has \d+ bytes$/],
    ['no-tokenizer', /^tokenizer\.json is missing from /],
  ];
  for (const [bad, message] of MESSAGES) {
    it(`refuses the ${bad} folder by name and keeps the model held before`, async () => {
      const { s, last } = session();
      const be = new CpuBackend();
      await s.open(be, await synthesizeToMemory({ family: 'llama', dtype: 'F32', shards: 1, seed: seed() }, 'good'), 1);
      await s.open(be, await synthesizeToMemory({ family: 'qwen3', dtype: 'F32', shards: 1, seed: seed(), bad }), 2);
      const r = last('hfOpened')!;
      expect(r.requestId).toBe(2);
      expect(r.refusal).toMatch(message);
      expect(r.model?.label).toBe('good');
      expect(s.summary?.label).toBe('good');
    });
  }

  it('refuses a model larger than the adapter offers, with what it needs and what the GPU offers', async () => {
    const small = { maxBufferSize: 4096, maxStorageBufferBindingSize: 4096, maxStorageBuffersPerShaderStage: 8, shaderF16: false, memoryBytes: 64 * 1024 };
    const { s, last } = session(() => small);
    await s.open(new CpuBackend(), await synthesizeToMemory({ family: 'gpt2', dtype: 'F32', shards: 1, seed: seed() }), 1);
    const r = last('hfOpened')!;
    expect(r.model).toBeUndefined();
    expect(r.refusal).toMatch(/needs|offers|lower|smaller/i);
    expect(s.summary).toBeNull();
  });

  it('a weights file that fails half-way through the upload is named, and leaves no tensor behind', async () => {
    /** The CPU backend, keeping the tensors made and not yet disposed. */
    class Tracking extends CpuBackend {
      readonly live = new Set<Tensor>();
      override tensor(data: ArrayLike<number>, shape: readonly number[], dtype: DType = 'f32'): Tensor {
        const t = super.tensor(data, shape, dtype);
        this.live.add(t);
        return t;
      }
      override tensorF16Bits(bits: Uint16Array, shape: readonly number[]): Tensor {
        const t = super.tensorF16Bits(bits, shape);
        this.live.add(t);
        return t;
      }
      override dispose(...ts: (Tensor | null | undefined)[]): void {
        for (const t of ts) if (t) this.live.delete(t);
        super.dispose(...ts);
      }
    }
    const mem = await synthesizeToMemory({ family: 'llama', dtype: 'BF16', shards: 1, seed: seed() }, 'flaky');
    let weightReads = 0;
    const flaky: ModelFolder = {
      label: mem.label,
      list: () => mem.list(),
      size: (n) => mem.size(n),
      read: async (n, a, b) => {
        // The header takes two reads; the tenth tensor's read fails, as a file removed mid-way would.
        if (n.endsWith('.safetensors') && ++weightReads === 12) throw new Error(`${n}: the file could not be read`);
        return mem.read(n, a, b);
      },
    };
    const be = new Tracking();
    const { s, last } = session();
    await s.open(be, flaky, 1);
    expect(last('hfOpened')!.refusal).toBe('model.safetensors: the file could not be read');
    expect(weightReads).toBeGreaterThanOrEqual(12);
    expect(be.live.size).toBe(0);
    expect(s.summary).toBeNull();
  });

  it('names a sampling setting out of range, and a prompt that does not fit the positions', async () => {
    const { s, last } = session();
    await s.open(new CpuBackend(), await synthesizeToMemory({ family: 'llama', dtype: 'F32', shards: 1, seed: seed() }), 1);
    const maxPos = s.summary!.maxPositions;
    const cases: [Partial<HfGenerateRequest>, RegExp][] = [
      [{ temperature: 0 }, /^temperature must be in \(0, 10\]/],
      [{ topP: 1.5 }, /^top-p must be in \(0, 1\]/],
      [{ maxNewTokens: 0 }, new RegExp(`^max new tokens must be an integer in \\[1, ${maxPos}\\]`)],
      [{ prompt: 'x'.repeat(4 * maxPos), chat: false, maxNewTokens: maxPos - 1 }, /exceed the model's max_position_embeddings/],
    ];
    for (const [patch, message] of cases) {
      await s.generate({ ...REQ, ...patch }, 9);
      expect(last('hfGenerated')!.refusal, JSON.stringify(patch).slice(0, 80)).toMatch(message);
    }
  });

  it('names the prompt’s characters a vocabulary has no token for, and refuses a prompt of only those', async () => {
    const { s, last } = session();
    await s.open(new CpuBackend(), new MemoryFolder('char-model', charModelFolderFiles(CHAR_CFG, new Float64Array(paramLayout(CHAR_CFG).total), '0123456789+=')), 1);
    await s.generate({ ...REQ, prompt: '12+7=?é', chat: false, maxNewTokens: 2 }, 4);
    const sample = last('hfGenerated')!.sample!;
    expect(sample.unknownChars).toEqual(['?', 'é']);
    expect(sample.promptIds).toHaveLength(1 + 5); // <bos> and the five known characters
    await s.generate({ ...REQ, prompt: '12+7=', chat: false, maxNewTokens: 2 }, 5);
    expect(last('hfGenerated')!.sample!.unknownChars).toBeUndefined();
    await s.generate({ ...REQ, prompt: 'ok?', chat: false, maxNewTokens: 2 }, 6);
    expect(last('hfGenerated')!.refusal).toBe('the prompt tokenizes to no token: the model has no token for “o”, “k”, “?”');
    // a byte-level vocabulary has a token for every character
    await s.open(new CpuBackend(), await synthesizeToMemory({ family: 'qwen3', dtype: 'F32', shards: 1, seed: seed() }), 7);
    await s.generate({ ...REQ, prompt: 'é ? 漢字', chat: false, maxNewTokens: 2 }, 8);
    expect(last('hfGenerated')!.sample!.unknownChars).toBeUndefined();
  });

  it('answers Generate without a model, and after close, with a refusal', async () => {
    const { s, last } = session();
    await s.generate(REQ, 1);
    expect(last('hfGenerated')!.refusal).toMatch(/no model is open/);
    await s.open(new CpuBackend(), await synthesizeToMemory({ family: 'gpt2', dtype: 'F32', shards: 1, seed: seed() }), 2);
    s.close();
    await s.generate(REQ, 3);
    expect(last('hfGenerated')!.refusal).toMatch(/no model is open/);
    expect(new MemoryFolder().label).toBe('memory');
  });
});
