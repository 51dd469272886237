// Teaching view "KL shaping": one sample's response as text, each token with the per-token reward
// −β·KL_t the batch gave it, the task score added at the last action token, and the return R_t
// those rewards make, drawn over the words. β is the batch's own; settings that differ from the
// run's are drawn beside it as a labelled what-if, recomputed with the float64 references.
import { Fragment, useMemo, useState } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import { findPreset, REWARD_HACKING } from '../../rl/presets.ts';
import { shownOwnBatch, useApp } from '../../store/appStore.ts';
import { ViewHelp } from '../charts/ChartHelp.tsx';
import { loadPreset } from '../loadPreset.ts';
import { klBatchContext } from './klBatch.ts';
import { actualCells, barScale, estimatorScore, fmt, klInScore, whatIfCells, whatIfProblem } from './klShaping.ts';
import { KlTokenStrip } from './KlTokenStrip.tsx';
import { SamplePicker } from './SamplePicker.tsx';

/** Responses this short (arithmetic's two digits and EOS) leave the penalty too few tokens to show. */
const SHORT_RESPONSE = 4;

/** `offerPreset`: the playground's reward-hacking preset is offered (not for an own-model batch: it trains the playground's model). */
function ShortResponseHint({ offerPreset }: { offerPreset: boolean }) {
  const { t } = useTranslation('teach');
  const name = t('rewardHackingPreset');
  const loaded = useApp((s) => s.preset === REWARD_HACKING);
  const preset = findPreset(REWARD_HACKING);
  return (
    <p className="kl-hint small" data-testid="kl-short-hint">
      <span>{t('kl.shortHint')}</span>
      {!offerPreset ? null : loaded ? (
        <span className="muted">{t('kl.presetLoaded', { preset: name })}</span>
      ) : preset ? (
        <button type="button" className="btn small" onClick={() => loadPreset(preset)}>
          {/* The name is its own text node, as the button has always drawn it (its screenshot baseline). */}
          <Trans t={t} i18nKey="kl.loadPreset" values={{ preset: name }} components={{ name: <Fragment /> }} />
        </button>
      ) : null}
    </p>
  );
}

export function KlShapingView() {
  const { t } = useTranslation('teach');
  const samples = useApp((s) => s.samples);
  // The run whose batch is on show (its β at that iteration), or the own-model batch's settings.
  const run = useApp((s) => s.runs.find((r) => r.id === s.batchRunId));
  const own = useApp(shownOwnBatch);
  const settings = useApp((s) => s.config);
  const [index, setIndex] = useState(0);
  const row = samples?.rows[Math.min(index, (samples?.rows.length ?? 1) - 1)];
  const ctx = useMemo(
    () => (own ? klBatchContext({ config: own.config, metrics: [] }, samples?.iter ?? -1, settings, false) : klBatchContext(run, samples?.iter ?? -1, settings)),
    [own, run, samples?.iter, settings],
  );
  const drawn = useMemo(() => {
    if (!row) return null;
    // The score cell is the one the returns start from: s̃ for a group estimator, so the strip adds up.
    const actual = actualCells(row, ctx.batch.beta, estimatorScore(row, ctx.batch.beta, ctx.setup) ?? row.reward);
    const problem = ctx.whatIf ? whatIfProblem(row, ctx.batch.beta, ctx.setup, ctx.whatIf.knobs.beta) : null;
    const whatIf = ctx.whatIf && !problem ? whatIfCells(row, ctx.batch.beta, ctx.setup, ctx.whatIf.knobs) : null;
    return { actual, whatIf, problem, scale: barScale(actual, whatIf ?? []) };
  }, [row, ctx]);
  if (!samples || !row || !drawn) {
    return (
      <div className="empty-state" data-testid="view-kl">
        <strong>{t('kl.emptyTitle')}</strong>
        {t('kl.emptyBody')}
      </div>
    );
  }
  const baselined = ctx.setup.advantageEstimator !== 'gae' ? estimatorScore(row, ctx.batch.beta, ctx.setup) : null;
  return (
    <div className="teach-view" data-testid="view-kl">
      <ViewHelp view="kl_shaping" title={t('kl.help')} />
      <div className="toolbar" style={{ marginBottom: 8 }}>
        <SamplePicker rewards={samples.rows.map((r) => r.reward)} index={index} onChange={setIndex} />
        <span className="muted small">
          {t('kl.formula', { beta: fmt(ctx.batch.beta) })}
          {ctx.klOutOfReward ? t('kl.klOutOfReward') : ''}
        </span>
      </div>
      {row.tokens.length <= SHORT_RESPONSE ? <ShortResponseHint offerPreset={!own} /> : null}
      <p className="sample-prompt small" translate="no">
        {row.prompt}
        <strong style={{ color: 'var(--text)' }}>{row.response}</strong>
      </p>
      <div className="kl-legend small muted" aria-hidden="true">
        <span>
          <i style={{ background: '#0072b2' }} />
          {t('kl.legendReturn')}
        </span>
        <span>
          <i style={{ background: '#d55e00' }} />
          {t('kl.legendPenalty')}
        </span>
        <span style={{ color: '#00734f', fontWeight: 600 }}>{ctx.setup.advantageEstimator === 'gae' ? t('kl.legendScore') : t('kl.legendGroupScore')}</span>
      </div>
      <div className="kl-strips">
        <KlTokenStrip cells={drawn.actual} scale={drawn.scale} label={t('kl.batchLabel', { iter: samples.iter, beta: fmt(ctx.batch.beta) })} testId="kl-actual" />
        {drawn.whatIf && ctx.whatIf ? (
          <KlTokenStrip cells={drawn.whatIf} scale={drawn.scale} label={t('kl.whatIfLabel', { knobs: ctx.whatIf.label })} testId="kl-whatif" whatIf />
        ) : null}
      </div>
      {ctx.whatIf && drawn.problem ? (
        <p className="small muted" data-testid="kl-whatif-problem">
          {t('kl.whatIfProblem', { knobs: ctx.whatIf.label, problem: t(`kl.problem.${drawn.problem}`) })}
        </p>
      ) : null}
      {baselined !== null ? (
        <p className="small muted">
          {fmt(baselined) === fmt(row.reward)
            ? t('kl.baselinedSame', { estimator: ctx.setup.advantageEstimator, score: fmt(baselined) })
            : t('kl.baselinedOther', { estimator: ctx.setup.advantageEstimator, score: fmt(baselined), raw: fmt(row.reward) })}
          {klInScore(ctx.batch.beta, ctx.setup) ? ` ${t('kl.klInScore')}` : ''}
        </p>
      ) : null}
    </div>
  );
}
