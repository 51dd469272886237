// Teaching view "Human feedback": two responses to the same prompt from the latest rollout; the
// person picks the better one (or skips). The labelled pairs accumulate and can fine-tune the
// reward model (Bradley–Terry) in the worker — RLHF's human step, by hand.
import { useEffect, useMemo } from 'react';
import { useApp } from '../../store/appStore.ts';
import { useFeedback } from '../../store/feedback.ts';
import { candidatePairs, pairCountText, pairKey, type CandidatePair } from '../../store/feedbackPairs.ts';
import { getTask } from '../../tasks/index.ts';
import type { SampleRow } from '../../worker/protocol.ts';

function Response({ side, row, onPick }: { side: 'A' | 'B'; row: SampleRow; onPick: () => void }) {
  return (
    <figure className="fb-response" aria-label={`Response ${side}`}>
      <figcaption>
        <strong>{side}</strong>
        {/* The task score is left out on purpose: the label should be the person's own judgement. */}
        <span className="muted small">{row.endedWithEos ? 'ended with EOS' : 'cut off (no EOS)'}</span>
      </figcaption>
      <p className="fb-text">{row.response === '' ? <span className="muted">(empty response)</span> : row.response}</p>
      <button type="button" className="btn primary small" onClick={onPick} aria-keyshortcuts={side === 'A' ? '1' : '2'}>
        {side} is better <kbd>{side === 'A' ? '1' : '2'}</kbd>
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
  const samples = useApp((s) => s.samples);
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
        You are the labeller. Pick the better of two responses to the same prompt; your choices train the reward model (Bradley–Terry), which scores rollouts when Reward source is{' '}
        <code>model</code>.
      </p>
      {hasRewardModel ? null : (
        <p className="notice warn small" data-testid="feedback-no-rm">
          The {task} task is scored by its rule and has no learned reward model, so labels cannot train one here. Set Task to sentiment (or pick “Reward hacking without KL”) to
          label responses and train its reward model.
        </p>
      )}
      {pair ? (
        <div className="fb-pair" data-testid="feedback-pair">
          <div className="fb-prompt">
            Prompt <code>{pair.prompt}</code>
            <span className="muted small">
              {' '}
              · iteration {samples?.iter} · {pairs.length} pair{pairs.length === 1 ? '' : 's'} to label
            </span>
          </div>
          <p className="muted small" data-testid="feedback-pair-count">
            {pairCountText(samples?.rows ?? [], pairs.length)}
          </p>
          <div className="fb-choices">
            <Response side="A" row={pair.a} onPick={() => pick('A')} />
            <Response side="B" row={pair.b} onPick={() => pick('B')} />
          </div>
          <button type="button" className="btn small" onClick={skipPair} aria-keyshortcuts="0">
            Skip <kbd>0</kbd>
          </button>
        </div>
      ) : (
        <div className="empty-state" data-testid="feedback-empty">
          <strong>{samples ? 'Nothing left to compare' : 'No samples yet'}</strong>
          {samples
            ? 'Every pair of different responses to the same prompt in the latest rollout is labelled or skipped. New ones arrive with the next iteration.'
            : 'Start training: pairs of responses to the same prompt appear here (Samples per prompt must be at least 2).'}
        </div>
      )}

      <div className="fb-labels">
        <div className="card-head">
          <h3 data-testid="label-count">
            {labels.length} labelled pair{labels.length === 1 ? '' : 's'}
          </h3>
          <div className="toolbar">
            <button type="button" className="btn small" disabled={labels.length === 0 || training} onClick={clear}>
              Clear
            </button>
            <button
              type="button"
              className="btn small primary"
              disabled={labels.length === 0 || training || !hasRewardModel}
              title={hasRewardModel ? undefined : `The ${task} task has no learned reward model`}
              onClick={() => void train()}
            >
              {training ? 'Training…' : 'Train reward model on my labels'}
            </button>
          </div>
        </div>
        {result ? (
          <p className="small" role="status" data-testid="rm-result">
            Reward model trained on {result.pairs} pair{result.pairs === 1 ? '' : 's'}: it now prefers your choice in {(100 * result.accuracy).toFixed(0)}% of them
            {result.accuracyBefore !== undefined ? ` (before: ${(100 * result.accuracyBefore).toFixed(0)}%)` : ''}.
            {rewardSource === 'rule' ? ' Set Reward source to model to train the policy with it.' : ''}
            <span className="muted" data-testid="rm-result-why">
              {' '}
              Agreement is the share of your labelled pairs in which the reward model scores your chosen response above the rejected one (a tie does not count), measured on those
              same pairs just after (and before) this training: with {result.pairs} pair{result.pairs === 1 ? '' : 's'} each one is {(100 / Math.max(1, result.pairs)).toFixed(0)}{' '}
              points, and it says whether the model fits your labels, not whether it generalises.
            </span>
          </p>
        ) : null}
        {labels.length > 0 ? (
          <ol className="fb-list" aria-label="Labelled pairs">
            {labels.map((p, i) => (
              <li key={pairKey(p.prompt, p.chosen, p.rejected)}>
                <code>{p.prompt}</code>{' '}
                <span className="fb-chosen" title="chosen">
                  ✓ {p.chosen || '(empty)'}
                </span>{' '}
                <span className="fb-rejected" title="rejected">
                  ✗ {p.rejected || '(empty)'}
                </span>
                <button type="button" className="btn ghost small" aria-label={`Remove label ${i + 1}`} onClick={() => remove(i)}>
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
