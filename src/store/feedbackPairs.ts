// The "Human feedback" view's pairs (feedbackPairing.ts) and the sentence that counts them.
import { t } from '../i18n/index.ts';
import type { SampleRow } from '../worker/protocol.ts';

export { type CandidatePair, candidatePairs, pairKey } from './feedbackPairing.ts';

/** Why the view offers `left` pairs: the rollout's prompts × responses, how many differ, how many are already labelled or skipped. */
export function pairCountText(rows: readonly SampleRow[], left: number): string {
  const byPrompt = new Map<string, Set<string>>();
  for (const r of rows) byPrompt.set(r.prompt, (byPrompt.get(r.prompt) ?? new Set()).add(r.response));
  const prompts = byPrompt.size;
  const perPrompt = prompts > 0 ? Math.round(rows.length / prompts) : 0;
  let total = 0;
  for (const responses of byPrompt.values()) total += (responses.size * (responses.size - 1)) / 2;
  const done = total - left;
  const counts = {
    prompts: t('notices:pairs.prompts', { count: prompts }),
    responses: t('notices:pairs.responses', { count: perPrompt }),
    pairs: t('notices:pairs.pairs', { count: total }),
    left,
  };
  return done > 0 ? t('notices:pairs.countWithDone', { ...counts, done }) : t('notices:pairs.count', counts);
}
