// Teaching view "Human feedback": two responses to the same prompt from the latest rollout; the
// person picks the better one (or skips). The labelled pairs accumulate and can fine-tune the
// reward model (Bradley–Terry) in the worker — RLHF's human step, by hand.
import { useEffect, useMemo } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import { shownOwnBatch, useApp } from '../../store/appStore.ts';
import { useFeedback } from '../../store/feedback.ts';
import { candidatePairs, pairKey, type CandidatePair } from '../../store/feedbackPairs.ts';
import { getTask } from '../../tasks/index.ts';
import type { SampleRow } from '../../worker/protocol.ts';
import { pairCountText } from './feedbackText.ts';

function Response({ side, row, onPick }: { side: 'A' | 'B'; row: SampleRow; onPick: () => void }) {
  const { t } = useTranslation('teach');
  const key = side === 'A' ? '1' : '2';
  return (
    <figure className="fb-response" aria-label={t('feedback.response', { side })}>
      <figcaption>
        <strong>{side}</strong>
        {/* The task score is left out on purpose: the label should be the person's own judgement. */}
        {row.endedWithEos === null ? null : <span className="muted small">{row.endedWithEos ? t('feedback.eos') : t('feedback.cutOff')}</span>}
      </figcaption>
      <p className="fb-text" translate="no">
        {row.response === '' ? <span className="muted">{t('feedback.emptyResponse')}</span> : row.response}
      </p>
      <button type="button" className="btn primary small" onClick={onPick} aria-keyshortcuts={key}>
        <Trans t={t} i18nKey="feedback.better" values={{ side, key }} components={{ kbd: <kbd /> }} />
      </button>
    </figure>
  );
}

function usePairKeys(pair: CandidatePair | undefined, pick: (winner: 'A' | 'B') => void, skip: () => void) {
  useEffect(() => {
    if (!pair) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.ctrlKey || e.metaKey || e.altKey || e.defaultPrevented) return;
      const t = e.target as HTMLElement | null;
      if (t && (t.tagName === 'INPUT' || t.tagName === 'SELECT' || t.tagName === 'TEXTAREA' || t.isContentEditable)) return;
      if (e.key === '1') pick('A');
      else if (e.key === '2') pick('B');
      else if (e.key === '0') skip();
      else return;
      e.preventDefault();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [pair, pick, skip]);
}

export function FeedbackView() {
  const { t } = useTranslation('teach');
  // The labels train the playground task's reward model: an own-model batch's responses are not offered.
  const ownModel = useApp((s) => shownOwnBatch(s) !== undefined);
  const shownSamples = useApp((s) => s.samples);
  const samples = ownModel ? null : shownSamples;
  const rewardSource = useApp((s) => s.config.rewardSource);
  const task = useApp((s) => s.config.task);
  // Only a task with a learned reward model (sentiment) can take the labels; say so before labelling, not after.
  const hasRewardModel = getTask(task).preferencePair !== undefined;
  const { labels, seen, training, result, label, skip, remove, clear, train } = useFeedback();
  const pairs = useMemo(() => candidatePairs(samples?.rows ?? [], seen), [samples, seen]);
  const pair = pairs[0];
  const pick = (winner: 'A' | 'B') => {
    if (!pair) return;
    const [w, l] = winner === 'A' ? [pair.a, pair.b] : [pair.b, pair.a];
    label({ prompt: pair.prompt, chosen: w.response, rejected: l.response });
  };
  const skipPair = () => pair && skip(pair.prompt, pair.a.response, pair.b.response);
  usePairKeys(pair, pick, skipPair);

  return (
    <div className="teach-view feedback" data-testid="view-feedback">
      <p className="muted small">
        <Trans t={t} i18nKey="feedback.intro" components={{ code: <code /> }} />
      </p>
      {hasRewardModel ? null : (
        <p className="notice warn small" data-testid="feedback-no-rm">
          <Trans t={t} i18nKey="feedback.noRewardModel" values={{ task, preset: t('rewardHackingPreset') }} components={{ code: <code /> }} />
        </p>
      )}
      {ownModel ? (
        <p className="muted small" data-testid="feedback-own-model">
          {t('feedback.ownModel')}
        </p>
      ) : null}
      {pair ? (
        <div className="fb-pair" data-testid="feedback-pair">
          <div className="fb-prompt">
            {t('feedback.prompt')} <code>{pair.prompt}</code>
            <span className="muted small"> {t('feedback.pairsLeft', { iter: samples?.iter, count: pairs.length })}</span>
          </div>
          <p className="muted small" data-testid="feedback-pair-count">
            {pairCountText(samples?.rows ?? [], pairs.length)}
          </p>
          <div className="fb-choices">
            <Response side="A" row={pair.a} onPick={() => pick('A')} />
            <Response side="B" row={pair.b} onPick={() => pick('B')} />
          </div>
          <button type="button" className="btn small" onClick={skipPair} aria-keyshortcuts="0">
            <Trans t={t} i18nKey="feedback.skip" components={{ kbd: <kbd /> }} />
          </button>
        </div>
      ) : (
        <div className="empty-state" data-testid="feedback-empty">
          <strong>{samples ? t('feedback.nothingLeftTitle') : t('feedback.emptyTitle')}</strong>
          {samples ? t('feedback.nothingLeftBody') : t('feedback.emptyBody')}
        </div>
      )}

      <div className="fb-labels">
        <div className="card-head">
          <h3 data-testid="label-count">{t('feedback.labelCount', { count: labels.length })}</h3>
          <div className="toolbar">
            <button type="button" className="btn small" disabled={labels.length === 0 || training} onClick={clear}>
              {t('feedback.clear')}
            </button>
            <button
              type="button"
              className="btn small primary"
              disabled={labels.length === 0 || training || !hasRewardModel}
              title={hasRewardModel ? undefined : t('feedback.noRewardModelTitle', { task })}
              onClick={() => void train()}
            >
              {training ? t('feedback.training') : t('feedback.train')}
            </button>
          </div>
        </div>
        {result ? (
          <p className="small" role="status" data-testid="rm-result">
            {t('feedback.result', {
              count: result.pairs,
              pct: (100 * result.accuracy).toFixed(0),
              before: result.accuracyBefore !== undefined ? t('feedback.resultBefore', { pct: (100 * result.accuracyBefore).toFixed(0) }) : '',
            })}
            {rewardSource === 'rule' ? <Trans t={t} i18nKey="feedback.useModel" components={{ code: <code /> }} /> : null}
            <span className="muted" data-testid="rm-result-why">
              {' '}
              {t('feedback.agreement', { count: result.pairs, points: (100 / Math.max(1, result.pairs)).toFixed(0) })}
            </span>
          </p>
        ) : null}
        {labels.length > 0 ? (
          <ol className="fb-list" aria-label={t('feedback.labelledPairs')}>
            {labels.map((p, i) => (
              <li key={pairKey(p.prompt, p.chosen, p.rejected)}>
                <code>{p.prompt}</code>{' '}
                <span className="fb-chosen" title={t('feedback.chosen')}>
                  ✓ {p.chosen || t('feedback.empty')}
                </span>{' '}
                <span className="fb-rejected" title={t('feedback.rejected')}>
                  ✗ {p.rejected || t('feedback.empty')}
                </span>
                <button type="button" className="btn ghost small" aria-label={t('feedback.remove', { n: i + 1 })} onClick={() => remove(i)}>
                  ×
                </button>
              </li>
            ))}
          </ol>
        ) : null}
      </div>
    </div>
  );
}
