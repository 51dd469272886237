// log p of each response token from the character model's own forward (Gpt.infer) over one
// unpadded row, the log-softmax taken on the host in float64: what the GPT-2 folder's log-probs
// (src/model/hf/charModelFolder.ts) are compared with.
import type { Backend } from '../../src/backend/backend.ts';
import type { Gpt } from '../../src/model/gpt.ts';

export async function charLogprobs(be: Backend, gpt: Gpt, prompt: readonly number[], response: readonly number[]): Promise<number[]> {
  const ids = [...prompt, ...response];
  const S = ids.length;
  const logits = await be.read(
    gpt.infer(be.tensor(Int32Array.from(ids), [1, S], 'i32'), be.tensor(new Float32Array(S).fill(1), [1, S]), be.tensor(Int32Array.from(ids.keys()), [1, S], 'i32')),
  );
  const V = gpt.cfg.vocabSize;
  return response.map((id, j) => {
    const row = logits.subarray((prompt.length + j - 1) * V, (prompt.length + j) * V);
    const max = Math.max(...row);
    return row[id] - max - Math.log(row.reduce((s, x) => s + Math.exp(x - max), 0));
  });
}
