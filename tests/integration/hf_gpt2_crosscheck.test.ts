// The GPT-2 family of the Hugging Face path against an independent implementation: the project's own
// character model (src/model/gpt.ts: pre-LN GPT-2 with LayerNorm 1e-5, tanh GELU, learned positions,
// tied head, weights stored (in, out) under GPT-2's names) on the float64 CPU backend. Its parameters
// are written as a GPT2LMHeadModel folder (F32, bare keys), opened like a user's folder, converted
// (Conv1D transposed, c_attn split) and run through the float64 reference forward: logits must agree.
import { describe, expect, it } from 'vitest';
import { CpuBackend } from '../../src/backend/cpu/cpuBackend.ts';
import type { GptConfig } from '../../src/model/config.ts';
import { Gpt } from '../../src/model/gpt.ts';
import { MemoryFolder } from '../../src/model/hf/folder.ts';
import { openHfFolder } from '../../src/model/hf/open.ts';
import { loadReferenceWeights } from '../../src/model/hf/referenceWeights.ts';
import { encodeHfSafetensors } from '../../src/model/hf/safetensorsWrite.ts';
import { syntheticTokenizerJson } from '../../src/model/hf/synthetic.ts';
import { paramLayout } from '../../src/model/params.ts';
import { hfForwardRef, responseLogprobsRef } from '../../src/reference/hf/forward.ts';
import { positionsFromMask } from '../../src/reference/nn/rope.ts';
import { logprobsRef } from '../../src/reference/logprobs.ts';
import { randomParams } from '../helpers/model.ts';
import { expectClose, rng } from '../helpers/random.ts';

describe('HF GPT-2 reference forward = the project’s GPT on the CPU backend', () => {
  for (const prefix of ['', 'transformer.']) {
    it(`same logits on left-padded rows (keys ${prefix ? 'with' : 'without'} "transformer.")`, async () => {
      const r = rng(prefix ? 301 : 302);
      // the tokenizer of the folder has 323 ids: the vocabulary must hold them
      const cfg: GptConfig = { vocabSize: 384, nLayer: 2, nHead: 2, dModel: 32, maxSeq: 16, head: 'lm' };
      const be = new CpuBackend();
      const params = randomParams(cfg, r, 0.3);
      const gpt = new Gpt(be, cfg, params);
      const layout = paramLayout(cfg);

      const folder = new MemoryFolder('gpt-as-hf');
      folder.setJson('config.json', {
        architectures: ['GPT2LMHeadModel'],
        model_type: 'gpt2',
        n_embd: cfg.dModel,
        n_head: cfg.nHead,
        n_layer: cfg.nLayer,
        n_positions: cfg.maxSeq,
        vocab_size: cfg.vocabSize,
        activation_function: 'gelu_new',
        layer_norm_epsilon: 1e-5,
        bos_token_id: 320,
        eos_token_id: 320,
      });
      folder.files.set(
        'model.safetensors',
        encodeHfSafetensors(layout.entries.map((e) => ({ key: prefix + e.name, dtype: 'F32', shape: e.shape, values: params.subarray(e.offset, e.offset + e.size) }))),
      );
      folder.setJson('tokenizer.json', syntheticTokenizerJson('gpt2'));
      const info = await openHfFolder(folder);
      expect(info.arch).toMatchObject({ family: 'gpt2', dFf: 4 * cfg.dModel, tiedHead: true, headDim: 16 });
      const w = await loadReferenceWeights(folder, info);

      const [B, S] = [3, 12];
      const lens = [12, 7, 1];
      const tokens = new Int32Array(B * S);
      const mask = new Float64Array(B * S);
      for (let b = 0; b < B; b++) {
        for (let t = S - lens[b]; t < S; t++) {
          tokens[b * S + t] = r.int(0, cfg.vocabSize);
          mask[b * S + t] = 1;
        }
      }
      const positions = positionsFromMask(mask, B, S);
      const ref = hfForwardRef(info.arch, w, tokens, mask, positions, B, S).logits;
      const ours = await be.read(gpt.infer(be.tensor(tokens, [B, S], 'i32'), be.tensor(mask, [B, S]), be.tensor(positions, [B, S], 'i32')));
      expectClose(ref, ours, 1e-11, 1e-11, 'logits');

      // log p(response | prompt) is the same rows of the same logits
      const prompt = [5, 17, 200];
      const response = [9, 300, 42, 7];
      const lp = responseLogprobsRef(info.arch, w, prompt, response).logprobs;
      const all = [...prompt, ...response];
      const logits1 = await be.read(
        gpt.infer(
          be.tensor(all, [1, all.length], 'i32'),
          be.tensor(new Float64Array(all.length).fill(1), [1, all.length]),
          be.tensor(Int32Array.from(all.keys()), [1, all.length], 'i32'),
        ),
      );
      const want = logprobsRef(logits1.subarray((prompt.length - 1) * cfg.vocabSize, (all.length - 1) * cfg.vocabSize), response, 1, response.length, cfg.vocabSize, 1).logprobs;
      expectClose(lp, want, 1e-11, 1e-11, 'response logprobs');
    });
  }
});
