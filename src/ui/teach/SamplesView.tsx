// Teaching view "Samples": the latest responses with each token coloured by advantage, KL, ratio
// value, or rollout-vs-old mismatch log π_rollout − log π_old (diverging scale around a neutral
// centre), plus reward and EOS status. Under clip_cov / kl_cov the tokens the loss acted on in that
// step (the trainer's own choice, src/rl/samples.ts covPicked) are outlined, with a legend.
import { useState } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import { t as translate } from '../../i18n/index.ts';
import { shownConfig, useApp } from '../../store/appStore.ts';
import { DapoLine } from './DapoLine.tsx';
import type { SampleToken } from '../../rl/samples.ts';

type ColourBy = 'advantage' | 'kl' | 'ratio' | 'value' | 'mismatch';
const CENTRE: Record<ColourBy, number> = { advantage: 0, kl: 0, ratio: 1, value: 0, mismatch: 0 };
const COLOUR_BY: readonly ColourBy[] = ['advantage', 'kl', 'ratio', 'value', 'mismatch'];
/** The mismatch as a formula: the same in every language. */
const LOG_DIFF = 'log π_rollout − log π_old';

/** The token's value for a colouring; mismatch is NaN (drawn uncoloured) when the rollout kept no log-probs. */
export function tokenValue(t: SampleToken, by: ColourBy): number {
  if (by === 'mismatch') return t.rolloutLogprob !== undefined && t.oldLogprob !== undefined ? t.rolloutLogprob - t.oldLogprob : NaN;
  return t[by];
}

/** Diverging red (below centre) → white → blue (above), scaled by the largest deviation shown. */
export function divergingColour(v: number, centre: number, scale: number): string {
  if (!Number.isFinite(v) || scale <= 0) return 'transparent';
  const t = Math.max(-1, Math.min(1, (v - centre) / scale));
  const a = Math.abs(t) * 0.75;
  return t >= 0 ? `rgba(31, 119, 180, ${a.toFixed(3)})` : `rgba(192, 57, 43, ${a.toFixed(3)})`;
}

/** The outline of a token clip_cov / kl_cov acted on (drawn over any colouring). */
const COV_OUTLINE = '2px solid #8e44ad';

const tokenTitle = (t: SampleToken, lossMode: string) =>
  translate('teach:samples.tokenTitle', { text: t.text, advantage: t.advantage.toFixed(3), kl: t.kl.toFixed(4), ratio: t.ratio.toFixed(3), value: t.value.toFixed(3) }) +
  (t.rolloutLogprob !== undefined && t.oldLogprob !== undefined
    ? translate('teach:samples.tokenTitleMismatch', { logDiff: LOG_DIFF, mismatch: (t.rolloutLogprob - t.oldLogprob).toExponential(2) })
    : '') +
  (t.covPicked ? translate('teach:samples.covPickedTitle', { mode: lossMode }) : '');

/** A token's background by the colouring, outlined where clip_cov / kl_cov acted on it. */
const tokenStyle = (t: SampleToken, by: ColourBy, scale: number) => ({
  background: divergingColour(tokenValue(t, by), CENTRE[by], scale),
  outline: t.covPicked ? COV_OUTLINE : undefined,
});

export function SamplesView() {
  const { t } = useTranslation('teach');
  const samples = useApp((s) => s.samples);
  const lossMode = useApp((s) => shownConfig(s).lossMode);
  const [by, setBy] = useState<ColourBy>('advantage');
  if (!samples || samples.rows.length === 0) {
    return (
      <div className="empty-state" data-testid="view-samples">
        <strong>{t('samples.emptyTitle')}</strong>
        {t('samples.emptyBody')}
      </div>
    );
  }
  const covShown = samples.rows.some((r) => r.tokens.some((t) => t.covPicked !== undefined));
  const covCount = samples.rows.reduce((n, r) => n + r.tokens.filter((t) => t.covPicked).length, 0);
  let scale = 0;
  for (const r of samples.rows) for (const t of r.tokens) if (Number.isFinite(tokenValue(t, by))) scale = Math.max(scale, Math.abs(tokenValue(t, by) - CENTRE[by]));
  return (
    <div className="teach-view" data-testid="view-samples">
      <div className="toolbar" style={{ marginBottom: 10 }}>
        <label>
          {t('samples.colourBy')}
          <select value={by} onChange={(e) => setBy(e.target.value as ColourBy)} aria-label={t('samples.colourBy')}>
            {COLOUR_BY.map((c) => (
              <option key={c} value={c}>
                {t(`samples.by.${c}`, { logDiff: LOG_DIFF })}
              </option>
            ))}
          </select>
        </label>
        <span className="legend">
          {(CENTRE[by] - scale).toPrecision(2)} <span className="bar" /> {(CENTRE[by] + scale).toPrecision(2)}
        </span>
        <span className="muted small">{t('samples.iteration', { iter: samples.iter })}</span>
      </div>
      <DapoLine />
      {covShown && (
        <p className="muted small" data-testid="samples-cov-legend">
          <span className="tok" style={{ outline: COV_OUTLINE }}>
            {' '}
          </span>{' '}
          <Trans t={t} i18nKey="samples.covLegend" values={{ count: covCount }} components={{ code: <code /> }} />
        </p>
      )}
      {samples.rows.map((row, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: rows of one iteration's batch by position (rows may be identical); the list is replaced whole, never reordered
        <div className="sample" key={i}>
          <div className="sample-head">
            <span>
              <Trans t={t} i18nKey="samples.reward" values={{ reward: row.reward.toFixed(3) }} components={{ b: <strong /> }} />
            </span>
            {row.endedWithEos === null ? null : <span className={`badge ${row.endedWithEos ? 'ok' : 'bad'}`}>{row.endedWithEos ? t('samples.eos') : t('samples.noEos')}</span>}
            <span>{t('samples.tokens', { n: row.tokens.length })}</span>
          </div>
          <div>
            <span className="sample-prompt" translate="no">
              {row.prompt}
            </span>
            {row.tokens.map((t, j) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: tokens of one response by position, never reordered
              <span key={j} className="tok" translate="no" data-cov-picked={t.covPicked ? '' : undefined} style={tokenStyle(t, by, scale)} title={tokenTitle(t, lossMode)}>
                {t.text}
              </span>
            ))}
          </div>
        </div>
      ))}
    </div>
  );
}
