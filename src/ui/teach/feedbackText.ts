// The Human feedback view's sentence on how many pairs it offers and why, in the page's language.
import { t } from '../../i18n/index.ts';
import { pairCounts } from '../../store/feedbackPairs.ts';
import type { SampleRow } from '../../worker/protocol.ts';

/** The rollout's prompts × responses, the pairs of different responses they give, those done and those `left`. */
export function pairCountText(rows: readonly SampleRow[], left: number): string {
  const c = pairCounts(rows, left);
  return t('teach:feedback.pairCount', {
    prompts: t('teach:feedback.prompts', { count: c.prompts }),
    responses: t('teach:feedback.responses', { count: c.perPrompt }),
    pairs: t('teach:feedback.pairs', { count: c.total }),
    done: c.done > 0 ? t('teach:feedback.done', { done: c.done }) : '',
    left: c.left,
  });
}
