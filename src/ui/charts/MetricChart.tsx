// One metric's chart: every given run overlaid and named in the chart's own legend, EMA-smoothed
// and downsampled for drawing, with its "?" help, PNG download and full-screen button, the note
// that says when a line is flat by construction, and a summary for screen readers. The playground's
// charts panel, an embedded chart and the own-model panel draw their runs with it.
import { memo, useEffect, useMemo, useRef, useState, type RefObject } from 'react';
import { useTranslation } from 'react-i18next';
import { CartesianGrid, Line, LineChart, ReferenceLine, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import type { MetricName } from '../../rl/metricNames.ts';
import { useApp } from '../../store/appStore.ts';
import { downloadChartPng } from './exportPng.ts';
import { FullscreenButton, useChartFullscreen } from './ChartFullscreen.tsx';
import { ChartHelpButton } from './ChartHelp.tsx';
import { chartNote, klTargetLine, noiseFloor } from './chartNotes.ts';
import { type ChartRun, noteConfigs } from './chartRun.ts';
import { chartStyle } from './chartStyle.ts';
import { chartSummary, formatIteration } from './chartSummary.ts';
import { HELP_UI, logName, ownModelHelpNote } from './chartHelpText.ts';
import { ChartLegend } from './ChartLegend.tsx';
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

interface ChartProps {
  title: string;
  metric: MetricName;
  runs: readonly ChartRun[];
  smoothing: number;
  present: boolean;
  /** The plot's height in px (an embedded chart fills its frame); the style's otherwise. */
  height?: number;
  /** Before the chart's ids and test ids, where another panel draws the same metric on the page. */
  idPrefix?: string;
  /** The title's heading level where the chart sits deeper than the charts panel's h2 (default 3). */
  headingLevel?: 3 | 5;
}

/**
 * A chart scrolled out of view redraws at most every OFFSCREEN_REFRESH_MS: redrawing all ten on every
 * metrics flush is what costs frames on a slow machine, and only three or four are on screen.
 */
export function MetricChart(props: ChartProps) {
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
  return (
    <ChartFigure
      figRef={ref}
      title={props.title}
      metric={props.metric}
      runs={shown.current}
      smoothing={props.smoothing}
      present={props.present}
      height={props.height}
      idPrefix={props.idPrefix ?? ''}
      headingLevel={props.headingLevel ?? 3}
    />
  );
}

const ChartFigure = memo(function ChartFigure({
  figRef: ref,
  title,
  metric,
  runs,
  smoothing,
  present,
  height,
  idPrefix,
  headingLevel,
}: Required<Pick<ChartProps, 'idPrefix' | 'headingLevel'>> & Omit<ChartProps, 'idPrefix' | 'headingLevel'> & { figRef: RefObject<HTMLElement | null> }) {
  const { t, i18n } = useTranslation('charts');
  const language = i18n.language;
  const data = useMemo(() => mergeRuns(runs.map((r) => ({ id: r.id, points: lttb(ema(extract(r.metrics, metric), smoothing)) }))), [runs, metric, smoothing]);
  const configs = useMemo(() => noteConfigs(runs), [runs]);
  const target = useMemo(() => (metric === 'kl_token_mean' ? klTargetLine(configs) : null), [metric, configs]);
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
    const floor = noiseFloor(metric, configs);
    if (floor !== null) {
      lo = Math.min(lo, -floor);
      hi = Math.max(hi, floor);
    }
    return niceTicks(lo, hi);
  }, [data, runs, target, metric, configs]);
  const style = chartStyle(present);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `language` is the trigger: the note is worded in it
  const note = useMemo(() => (data.length === 0 ? null : chartNote(metric, configs)), [data.length, metric, configs, language]);
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
  const summaryId = `${idPrefix}chart-summary-${metric}`;
  const logged = logName(metric);
  const ownModel = runs.length > 0 && runs.every((r) => r.ownModel);
  const setNotice = useApp((s) => s.setNotice);
  const fs = useChartFullscreen();
  return (
    <figure
      className={`chart-card card${fs.full ? ' fullscreen' : ''}`}
      ref={ref}
      data-testid={`${idPrefix}chart-${metric}`}
      aria-label={t('panel.chartLabel', { title })}
      aria-describedby={summaryId}
    >
      <p className="visually-hidden" id={summaryId} data-testid={summaryId}>
        {summary}
      </p>
      <div className="chart-head">
        {headingLevel === 5 ? <h5>{title}</h5> : <h3>{title}</h3>}
        {logged ? (
          <code className="metric-id" translate="no" title={t('panel.logName', { engine: HELP_UI[logged.engine], name: logged.name })}>
            {logged.name}
          </code>
        ) : null}
        <ChartHelpButton metric={metric} title={title} testIdPrefix={idPrefix} note={ownModel ? ownModelHelpNote(metric) : undefined} />
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
                strokeDasharray={r.dashed ? '5 3' : undefined}
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
        <figcaption className="chart-note" data-testid={`${idPrefix}chart-note-${metric}`}>
          {note}
        </figcaption>
      )}
    </figure>
  );
});
