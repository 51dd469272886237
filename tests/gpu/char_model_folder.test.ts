// The character model's GPT-2 folder (src/model/hf/charModelFolder.ts) on WebGPU: HfModel's f32
// kernels score the shipped arithmetic model's answers with the log-probs the character model's own
// f32 forward gives (within 2e-3, the house's f32 bound for whole-model log-probs), and with the
// float64 reference's within the same bound.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CpuBackend } from '../../src/backend/cpu/cpuBackend.ts';
import { modelFromCheckpoint } from '../../src/model/checkpoint.ts';
import { checkpointFolderFiles } from '../../src/model/hf/charModelFolder.ts';
import { MemoryFolder } from '../../src/model/hf/folder.ts';
import { HfModel } from '../../src/model/hf/hfModel.ts';
import { openHfFolder } from '../../src/model/hf/open.ts';
import { responseLogprobs } from '../../src/model/hf/scoring.ts';
import { CharTokenizer } from '../../src/model/tokenizer.ts';
import { webgpuBackend } from '../helpers/backends.ts';
import { charLogprobs } from '../helpers/charLogprobs.ts';
import { expectClose } from '../helpers/random.ts';

const CHECKPOINT = new Uint8Array(readFileSync(new URL('../../public/checkpoints/arithmetic.safetensors', import.meta.url)));

describe('the shipped arithmetic model as GPT-2, on WebGPU', () => {
  it('HfModel scores its answers as the character model does, and as the float64 reference', async () => {
    const be = await webgpuBackend();
    const folder = new MemoryFolder('arithmetic-gpt2', checkpointFolderFiles(CHECKPOINT));
    const info = await openHfFolder(folder);
    const model = await HfModel.load(be, folder, info, 'f32');
    const { model: gpt, info: ck } = modelFromCheckpoint(be, CHECKPOINT);
    const cpu = new CpuBackend();
    const { model: ref } = modelFromCheckpoint(cpu, CHECKPOINT);
    try {
      const tok = new CharTokenizer(ck.alphabet);
      // right and wrong answers, so some log-probs are far below 0
      const pairs = [
        ['12+34=', '46'],
        ['12+34=', '47'],
        ['99+1=', '100'],
        ['7+8=', '51'],
      ];
      const prompts = pairs.map(([p]) => tok.encodePrompt(p));
      const responses = pairs.map(([, a]) => [...tok.encode(a), tok.eosId]);
      const hf = await responseLogprobs(model, prompts, responses);
      let spread = 0;
      for (let b = 0; b < pairs.length; b++) {
        const own = await charLogprobs(be, gpt, prompts[b], responses[b]);
        const exact = await charLogprobs(cpu, ref, prompts[b], responses[b]);
        spread = Math.max(spread, ...exact.map((x) => -x));
        expectClose(hf.logprobs[b], own, 0, 2e-3, `row ${b}: HfModel against the character model on WebGPU`);
        expectClose(hf.logprobs[b], exact, 0, 2e-3, `row ${b}: HfModel against the float64 character model`);
      }
      expect(spread).toBeGreaterThan(1); // a wrong answer is unlikely: the rows are not all near 0
    } finally {
      model.dispose();
      gpt.dispose();
      ref.dispose();
    }
  });
});
