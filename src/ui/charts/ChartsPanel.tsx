// Live training curves: one small chart per metric (MetricChart.tsx), every visible run overlaid,
// with EMA smoothing, a run list (the current comparison's runs, the earlier ones folded away;
// rename, show/hide, delete, new comparison, clear) and CSV / JSON exports. Its words are in the
// lazily loaded `charts` namespace: the panel sits under Playground's <Suspense>.
import { Fragment, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { formatNumber } from '../../i18n/index.ts';
import { useApp } from '../../store/appStore.ts';
import { metricsToCsv, metricsToJson } from '../../store/exportMetrics.ts';
import { comparisonOf } from '../../store/comparisons.ts';
import { describeRunBackend, type RunRecord } from '../../store/runs.ts';
import { trainer } from '../../store/trainerClient.ts';
import { downloadBlob } from '../../store/download.ts';
import { continueRecorded, openRunFile, saveRunFile, useRecordedStates } from '../../store/runFiles.ts';
import { RunFilePicker } from '../RunFilePicker.tsx';
import { usePresenter } from '../presenter.ts';
import { chartsFor } from './chartList.ts';
import { HeldOutChart } from './HeldOutChart.tsx';
import { MetricChart } from './MetricChart.tsx';
import { SmoothingSlider } from './SmoothingSlider.tsx';

/** One run in the run list: its colour, show/hide, name, iterations and delete. */
function RunChip({ run: r, active }: { run: RunRecord; active: boolean }) {
  const { t } = useTranslation('charts');
  const toggleRun = useApp((s) => s.toggleRun);
  const renameRun = useApp((s) => s.renameRun);
  const deleteRun = useApp((s) => s.deleteRun);
  const state = useRecordedStates((s) => s.states[r.id]);
  return (
    <li className={`run-chip${r.visible ? '' : ' hidden-run'}${active ? ' active' : ''}`}>
      <span className="swatch" style={{ background: r.color }} aria-hidden="true" />
      <input type="checkbox" checked={r.visible} onChange={() => toggleRun(r.id)} aria-label={t('runs.show', { name: r.name })} />
      <input type="text" value={r.name} onChange={(e) => renameRun(r.id, e.target.value)} aria-label={t('runs.name')} />
      <span className="muted" title={t('runs.trainedOn', { backend: describeRunBackend(r) })}>
        {r.backends
          ? t('runs.iterationsSwitched', {
              n: formatNumber(r.metrics.length),
              backend: r.backend === 'cpu' ? 'CPU' : 'WebGPU',
              iter: formatNumber(r.backends.at(-1)!.fromIter),
            })
          : t('runs.iterations', { n: formatNumber(r.metrics.length) })}
      </span>
      {r.recorded ? (
        <span className="badge recorded-badge" title={t('runs.recordedFrom', { file: r.recorded.file })} data-testid="recorded-badge">
          {t('runs.recorded')}
        </span>
      ) : null}
      {state ? (
        <button type="button" className="btn small" title={t('runs.continueHint')} onClick={() => void continueRecorded(r.id)} data-testid="continue-recorded">
          {t('runs.continue', { iter: formatNumber(state.iter) })}
        </button>
      ) : null}
      <button type="button" className="btn ghost small" aria-label={t('runs.save', { name: r.name })} title={t('runs.saveHint')} onClick={() => void saveRunFile(r.id)}>
        ⤓
      </button>
      <button type="button" className="btn ghost small" aria-label={t('runs.delete', { name: r.name })} disabled={active} onClick={() => deleteRun(r.id)}>
        ×
      </button>
    </li>
  );
}

/** "Open run…": a run file (runFiles.ts) from the disk; the panel also takes one dropped on it. */
function OpenRunButton() {
  const { t } = useTranslation('charts');
  return <RunFilePicker label={t('runs.open')} className="btn small" title={t('runs.openHint')} testId="open-run" />;
}

/** A file dragged over the panel: the drop opens it as a run file. */
const draggingFiles = (e: DragEvent) => Array.from(e.dataTransfer?.types ?? []).includes('Files');

/** "New comparison" and "Clear…" (which asks first: it deletes for good), in the panel's toolbar once there are runs. */
function RunActions() {
  const { t } = useTranslation('charts');
  const runs = useApp((s) => s.runs);
  const active = useApp((s) => s.activeRunId);
  const clearRuns = useApp((s) => s.clearRuns);
  const [confirming, setConfirming] = useState(false);
  if (runs.length === 0) return null;
  const deletable = runs.filter((r) => r.id !== active).length;
  const anyShown = active !== null || runs.some((r) => r.visible);
  return (
    <>
      <button type="button" className="btn small" data-testid="new-comparison" disabled={!anyShown} title={t('runs.newComparisonHint')} onClick={() => trainer.newComparison()}>
        {t('runs.newComparison')}
      </button>
      {confirming ? (
        <span className="run-clear-confirm">
          <span className="small">{t('runs.clearConfirm', { count: deletable })}</span>
          <button
            type="button"
            className="btn small"
            data-testid="clear-runs-yes"
            onClick={() => {
              clearRuns();
              setConfirming(false);
            }}
          >
            {t('runs.clearYes')}
          </button>
          <button type="button" className="btn ghost small" onClick={() => setConfirming(false)}>
            {t('runs.clearNo')}
          </button>
        </span>
      ) : (
        <button type="button" className="btn ghost small" data-testid="clear-runs" disabled={deletable === 0} title={t('runs.clearHint')} onClick={() => setConfirming(true)}>
          {t('runs.clear')}
        </button>
      )}
    </>
  );
}

/**
 * The runs of the current comparison, then the earlier ones folded away (each can be ticked back
 * onto the charts).
 */
function RunList() {
  const { t } = useTranslation('charts');
  const runs = useApp((s) => s.runs);
  const active = useApp((s) => s.activeRunId);
  const comparison = useApp((s) => s.comparison);
  const current = runs.filter((r) => comparisonOf(r) === comparison);
  const earlier = runs.filter((r) => comparisonOf(r) !== comparison);
  const [earlierOpen, setEarlierOpen] = useState(false);
  if (runs.length === 0)
    return (
      <p className="muted small" data-testid="run-list-empty">
        {t('runs.empty')}
      </p>
    );
  return (
    <div className="runs">
      {current.length > 0 ? (
        <ul className="run-list" aria-label={t('runs.label')} data-testid="run-list">
          {current.map((r) => (
            <RunChip key={r.id} run={r} active={r.id === active} />
          ))}
        </ul>
      ) : (
        <p className="muted small" data-testid="run-list-empty-comparison">
          {t('runs.emptyComparison')}
        </p>
      )}
      {earlier.length > 0 ? (
        <details className="earlier-runs" data-testid="earlier-runs" open={earlierOpen || earlier.some((r) => r.visible)} onToggle={(e) => setEarlierOpen(e.currentTarget.open)}>
          <summary className="small">{t('runs.earlier', { n: formatNumber(earlier.length) })}</summary>
          <ul className="run-list" aria-label={t('runs.earlier', { n: formatNumber(earlier.length) })} data-testid="earlier-run-list">
            {earlier.map((r) => (
              <RunChip key={r.id} run={r} active={r.id === active} />
            ))}
          </ul>
        </details>
      ) : null}
    </div>
  );
}

export function ChartsPanel() {
  const { t } = useTranslation('charts');
  const runs = useApp((s) => s.runs);
  const smoothing = useApp((s) => s.smoothing);
  const visible = useMemo(() => runs.filter((r) => r.visible), [runs]);
  const config = useApp((s) => s.config);
  const present = usePresenter();
  const charts = useMemo(() => chartsFor(visible, config, present), [visible, config, present]);
  const stamp = () => new Date().toISOString().slice(0, 19).replace(/[:T]/g, '-');
  return (
    <section
      className="charts card"
      aria-labelledby="charts-title"
      onDragOver={(e) => {
        if (draggingFiles(e.nativeEvent)) e.preventDefault();
      }}
      onDrop={(e) => {
        const file = e.dataTransfer.files?.[0];
        if (!file) return;
        e.preventDefault();
        void openRunFile(file);
      }}
    >
      <div className="card-head">
        <h2 id="charts-title">{t('panel.title')}</h2>
        <div className="toolbar">
          <SmoothingSlider />
          <RunActions />
          <OpenRunButton />
          <button
            type="button"
            className="btn small"
            disabled={runs.length === 0}
            onClick={() => downloadBlob(new Blob([metricsToCsv(runs)], { type: 'text/csv' }), `ppo-metrics-${stamp()}.csv`)}
          >
            {t('panel.exportCsv')}
          </button>
          <button
            type="button"
            className="btn small"
            disabled={runs.length === 0}
            onClick={() => downloadBlob(new Blob([metricsToJson(runs)], { type: 'application/json' }), `ppo-metrics-${stamp()}.json`)}
          >
            {t('panel.exportJson')}
          </button>
        </div>
      </div>
      <RunList />
      <div className="chart-grid" style={{ marginTop: 12 }}>
        {charts.map((c) => (
          <Fragment key={c.metric}>
            <MetricChart title={c.title} metric={c.metric} runs={visible} smoothing={smoothing} present={present} />
            {/* Beside Reward: the training reward and what it buys on prompts never trained on. */}
            {c.metric === 'reward_mean' ? <HeldOutChart runs={visible} present={present} /> : null}
          </Fragment>
        ))}
      </div>
    </section>
  );
}
