// Live training curves: one small chart per metric, every visible run overlaid and named in the
// chart's own legend, with EMA smoothing, a run list (the current comparison's runs, the earlier
// ones folded away; rename, show/hide, delete, new comparison, clear) and CSV / JSON / PNG exports. Its words are in
// the lazily loaded `charts` namespace: the panel sits under Playground's <Suspense>.
import { Fragment, memo, useEffect, useMemo, useRef, useState, type RefObject } from 'react';
import { useTranslation } from 'react-i18next';
import { CartesianGrid, Line, LineChart, ReferenceLine, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { formatNumber } from '../../i18n/index.ts';
import type { MetricName } from '../../rl/metricNames.ts';
import { useApp } from '../../store/appStore.ts';
import { metricsToCsv, metricsToJson } from '../../store/exportMetrics.ts';
import { comparisonOf } from '../../store/comparisons.ts';
import { describeRunBackend, type RunRecord } from '../../store/runs.ts';
import { trainer } from '../../store/trainerClient.ts';
import { downloadBlob } from '../../store/download.ts';
import { continueRecorded, openRunFile, saveRunFile, useRecordedStates } from '../../store/runFiles.ts';
import { RunFilePicker } from '../RunFilePicker.tsx';
import { downloadChartPng } from './exportPng.ts';
import { usePresenter } from '../presenter.ts';
import { FullscreenButton, useChartFullscreen } from './ChartFullscreen.tsx';
import { ChartHelpButton } from './ChartHelp.tsx';
import { chartNote, klTargetLine, noiseFloor } from './chartNotes.ts';
import { chartStyle } from './chartStyle.ts';
import { chartSummary, formatIteration } from './chartSummary.ts';
import { chartsFor } from './chartList.ts';
import { HELP_UI, logName } from './chartHelpText.ts';
import { ChartLegend } from './ChartLegend.tsx';
import { HeldOutChart } from './HeldOutChart.tsx';
import { ema, extract, lttb, mergeRuns, niceTicks } from './series.ts';

const fmt = (v: number) => (Math.abs(v) >= 1000 || (Math.abs(v) < 0.01 && v !== 0) ? v.toExponential(1) : Number(v.toPrecision(3)).toString());

/** Whether the element is on screen (or within a screen's margin of it). */
function useNearViewport(ref: RefObject<HTMLElement | null>): boolean {
  const [near, setNear] = useState(true);
  useEffect(() => {
    const el = ref.current;
    if (!el || typeof IntersectionObserver !== 'function') return;
    const io = new IntersectionObserver(([e]) => setNear(e.isIntersecting), { rootMargin: '300px 0px' });
    io.observe(el);
    return () => io.disconnect();
  }, [ref]);
  return near;
}

const OFFSCREEN_REFRESH_MS = 2000;

/**
 * A chart scrolled out of view redraws at most every OFFSCREEN_REFRESH_MS: redrawing all ten on every
 * metrics flush is what costs frames on a slow machine, and only three or four are on screen.
 */
export function MetricChart(props: { title: string; metric: MetricName; runs: readonly RunRecord[]; smoothing: number; present: boolean; height?: number }) {
  const ref = useRef<HTMLElement>(null);
  const near = useNearViewport(ref);
  const shown = useRef(props.runs);
  const shownAt = useRef(0);
  // Set by the catch-up timer: its render must take the new runs even if the timer fired a
  // fraction of a millisecond before OFFSCREEN_REFRESH_MS by performance.now(). Without it that
  // render left the chart stale with no timer pending, until the next metrics flush (an
  // off-screen chart stayed empty after a burst of messages: e2e/charts.spec.ts under load).
  const due = useRef(false);
  const [, refresh] = useState(0);
  const now = performance.now();
  if (shown.current !== props.runs && (near || due.current || now - shownAt.current >= OFFSCREEN_REFRESH_MS)) {
    shown.current = props.runs;
    shownAt.current = now;
    due.current = false;
  }
  // Off screen, catch up within OFFSCREEN_REFRESH_MS even after the trainer stops sending, so a
  // printout or full-page capture is never more stale than that.
  const stale = shown.current !== props.runs;
  useEffect(() => {
    if (!stale) return;
    const t = setTimeout(
      () => {
        due.current = true;
        refresh((x) => x + 1);
      },
      Math.max(0, shownAt.current + OFFSCREEN_REFRESH_MS - performance.now()),
    );
    return () => clearTimeout(t);
  }, [stale]);
  return <ChartFigure figRef={ref} title={props.title} metric={props.metric} runs={shown.current} smoothing={props.smoothing} present={props.present} height={props.height} />;
}

const ChartFigure = memo(function ChartFigure({
  figRef: ref,
  title,
  metric,
  runs,
  smoothing,
  present,
  height,
}: {
  figRef: RefObject<HTMLElement | null>;
  title: string;
  metric: MetricName;
  runs: readonly RunRecord[];
  smoothing: number;
  present: boolean;
  /** The plot's height in px (an embedded chart fills its frame); the style's otherwise. */
  height?: number;
}) {
  const { t, i18n } = useTranslation('charts');
  const language = i18n.language;
  const data = useMemo(() => mergeRuns(runs.map((r) => ({ id: r.id, points: lttb(ema(extract(r.metrics, metric), smoothing)) }))), [runs, metric, smoothing]);
  const target = useMemo(() => (metric === 'kl_token_mean' ? klTargetLine(runs.map((r) => r.config)) : null), [metric, runs]);
  const counts = useMemo(() => new Map(runs.map((r) => [r.id, data.reduce((n, row) => n + (row[r.id] === undefined ? 0 : 1), 0)])), [data, runs]);
  const ticks = useMemo(() => {
    let lo = Infinity;
    let hi = -Infinity;
    for (const row of data)
      for (const r of runs) {
        const v = row[r.id];
        if (v !== undefined) {
          lo = Math.min(lo, v);
          hi = Math.max(hi, v);
        }
      }
    if (!Number.isFinite(lo)) return [0, 1];
    // A target line (adaptive KL) stays in view.
    if (target !== null) {
      lo = Math.min(lo, target);
      hi = Math.max(hi, target);
    }
    // Zero by construction: a fixed band, not float32 rounding magnified to fill the chart.
    const floor = noiseFloor(
      metric,
      runs.map((r) => r.config),
    );
    if (floor !== null) {
      lo = Math.min(lo, -floor);
      hi = Math.max(hi, floor);
    }
    return niceTicks(lo, hi);
  }, [data, runs, target, metric]);
  const style = chartStyle(present);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `language` is the trigger: the note is worded in it
  const note = useMemo(
    () =>
      data.length === 0
        ? null
        : chartNote(
            metric,
            runs.map((r) => r.config),
          ),
    [data.length, metric, runs, language],
  );
  // For screen readers: the raw last value and trend of each run (the drawing is smoothed and downsampled).
  // biome-ignore lint/correctness/useExhaustiveDependencies: `language` is the trigger: the summary is worded in it
  const summary = useMemo(
    () =>
      chartSummary(
        title,
        runs.map((r) => ({ name: r.name, points: extract(r.metrics, metric) })),
      ),
    [title, runs, metric, language],
  );
  const summaryId = `chart-summary-${metric}`;
  const logged = logName(metric);
  const setNotice = useApp((s) => s.setNotice);
  const fs = useChartFullscreen();
  return (
    <figure
      className={`chart-card card${fs.full ? ' fullscreen' : ''}`}
      ref={ref}
      data-testid={`chart-${metric}`}
      aria-label={t('panel.chartLabel', { title })}
      aria-describedby={summaryId}
    >
      <p className="visually-hidden" id={summaryId} data-testid={summaryId}>
        {summary}
      </p>
      <div className="chart-head">
        <h3>{title}</h3>
        {logged ? (
          <code className="metric-id" translate="no" title={t('panel.logName', { engine: HELP_UI[logged.engine], name: logged.name })}>
            {logged.name}
          </code>
        ) : null}
        <ChartHelpButton metric={metric} title={title} />
        <button
          type="button"
          className="btn ghost small png"
          disabled={data.length === 0}
          aria-label={t('panel.downloadPng', { title })}
          onClick={() => void downloadChartPng(ref.current!, title).catch((e: unknown) => setNotice({ tone: 'error', text: String(e) }))}
        >
          {t('panel.png')}
        </button>
        <FullscreenButton fs={fs} title={title} />
      </div>
      {data.length === 0 ? <div className="chart-empty">{t('panel.empty')}</div> : <ChartLegend title={title} runs={runs.filter((r) => (counts.get(r.id) ?? 0) > 0)} />}
      {data.length === 0 ? null : (
        <ResponsiveContainer width="100%" height={fs.full ? fs.height : (height ?? style.height)}>
          <LineChart data={data} margin={{ top: 4, right: style.right, bottom: 0, left: 0 }}>
            <CartesianGrid stroke={style.grid} vertical={false} />
            <XAxis dataKey="iter" type="number" domain={['dataMin', 'dataMax']} tick={style.tick} tickLine={false} allowDecimals={false} tickFormatter={formatIteration} />
            <YAxis
              tick={style.tick}
              tickLine={false}
              axisLine={false}
              width={style.yWidth}
              tickFormatter={fmt}
              domain={[ticks[0], ticks[ticks.length - 1]]}
              ticks={ticks}
              allowDataOverflow
            />
            <Tooltip
              formatter={(v) => (typeof v === 'number' ? fmt(v) : String(v))}
              labelFormatter={(l) => t('panel.tooltipIteration', { iter: formatIteration(l) })}
              isAnimationActive={false}
            />
            {target !== null ? <ReferenceLine y={target} stroke="#5b6478" strokeDasharray="4 3" ifOverflow="extendDomain" /> : null}
            {runs.map((r) => (
              // A run with one or two points has no line to speak of: draw its points, or the chart looks empty after Step.
              <Line
                key={r.id}
                dataKey={r.id}
                name={r.name}
                stroke={r.color}
                dot={(counts.get(r.id) ?? 0) < 3 ? { r: style.dot, fill: r.color } : false}
                strokeWidth={style.line}
                isAnimationActive={false}
                connectNulls
              />
            ))}
          </LineChart>
        </ResponsiveContainer>
      )}
      {note && (
        <figcaption className="chart-note" data-testid={`chart-note-${metric}`}>
          {note}
        </figcaption>
      )}
    </figure>
  );
});

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
  const setSmoothing = useApp((s) => s.setSmoothing);
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
          <label>
            {t('panel.smoothing')}
            <input type="range" min={0} max={0.99} step={0.01} value={smoothing} onChange={(e) => setSmoothing(Number(e.target.value))} aria-label={t('panel.smoothing')} />
            <span className="small" style={{ width: '3ch' }}>
              {smoothing.toFixed(2)}
            </span>
          </label>
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
