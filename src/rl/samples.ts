// SampleRow views for the UI: a handful of sequences of the iteration with per-token quantities.
// Rows come from the LAST minibatch of the last epoch, whose ratios π_new/π_old were taken at that
// minibatch's forward pass (before its AdamW step).
import type { CharTokenizer } from '../model/tokenizer.ts';
import type { TaskSample } from '../tasks/task.ts';
import type { SampleRow } from '../worker/protocol.ts';
import type { ExperienceHost } from './metrics.ts';
import { responseIds, type RolloutBatch } from './rollout.ts';

export function tokenText(tok: CharTokenizer, id: number): string {
  if (id === tok.eosId) return '<eos>';
  if (id === tok.bosId) return '<bos>';
  if (id === tok.padId) return '<pad>';
  return tok.decode([id], { stopAtEos: false });
}

export function sampleRows(
  tok: CharTokenizer,
  r: RolloutBatch,
  samples: TaskSample[],
  e: ExperienceHost,
  rows: Int32Array, // batch rows of the last minibatch
  ratio: Float64Array, // (rows.length, A) π_new/π_old of those rows
  count: number,
): SampleRow[] {
  const A = r.A;
  const out: SampleRow[] = [];
  for (let i = 0; i < Math.min(count, rows.length); i++) {
    const b = rows[i];
    const ids = responseIds(r, b);
    const tokens = [];
    for (let a = 0; a < A; a++) {
      const k = b * A + a;
      if (e.mask[k] === 0) continue;
      tokens.push({
        text: tokenText(tok, ids[a]),
        advantage: e.advantages[k],
        kl: e.kl[k],
        ratio: ratio[i * A + a],
        value: e.values[k],
        reward: e.rewards[k],
        return: e.returns[k],
      });
    }
    out.push({ prompt: samples[b].prompt, response: samples[b].response, reward: e.scores[b], endedWithEos: samples[b].endedWithEos, tokens });
  }
  return out;
}
