// "Held-out": the task's headline metric on prompts never trained on, evaluated by the worker
// every `evalEvery` iterations and before the first (iteration 0 = the SFT model). Each run draws
// a solid sampled line (rollout temperature, as PPO optimises it) and a dashed greedy line.
import { memo, useMemo, useRef } from 'react';
import { useTranslation } from 'react-i18next';
import { CartesianGrid, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { formatNumber } from '../../i18n/index.ts';
import { useApp } from '../../store/appStore.ts';
import type { RunRecord } from '../../store/runs.ts';
import { EVAL_SAMPLES_PER_PROMPT } from '../../worker/evalSchedule.ts';
import { ChartHelpButton } from './ChartHelp.tsx';
import { FullscreenButton, useChartFullscreen } from './ChartFullscreen.tsx';
import { ChartLegend } from './ChartLegend.tsx';
import { HELD_OUT_KEY } from './chartHelpText.ts';
import { chartStyle } from './chartStyle.ts';
import { chartSummary, formatIteration } from './chartSummary.ts';
import { downloadChartPng } from './exportPng.ts';
import { greedyId, heldOutCaption, heldOutKey, heldOutSeries, heldOutTitle, passId } from './heldOut.ts';
import { extract, niceTicks } from './series.ts';

type EvalRun = Pick<RunRecord, 'id' | 'name' | 'color' | 'config' | 'evals'>;

const fmt = (v: number) => Number(v.toPrecision(3)).toString();

/** The runs' evaluation-relevant fields, with the same identity as long as none of them changed. */
function useEvalRuns(runs: readonly RunRecord[]): readonly EvalRun[] {
  const last = useRef<EvalRun[]>([]);
  const same =
    last.current.length === runs.length &&
    runs.every((r, i) => {
      const p = last.current[i];
      return p.id === r.id && p.evals === r.evals && p.name === r.name && p.color === r.color && p.config === r.config;
    });
  if (!same) last.current = runs.map((r) => ({ id: r.id, name: r.name, color: r.color, config: r.config, evals: r.evals }));
  return last.current;
}

/** A run's thinner, dashed companion of its sampled line (greedy: "5 3", pass@k: "1 3"), without dots. */
function companionLine(dataKey: string, name: string, color: string, width: number, dash: string) {
  return <Line key={dataKey} dataKey={dataKey} name={name} stroke={color} strokeWidth={width * 0.8} strokeDasharray={dash} dot={false} isAnimationActive={false} connectNulls />;
}

export function HeldOutChart({ runs, present = false }: { runs: readonly RunRecord[]; present?: boolean }) {
  return <HeldOutFigure runs={useEvalRuns(runs)} present={present} />;
}

const HeldOutFigure = memo(function HeldOutFigure({ runs, present }: { runs: readonly EvalRun[]; present: boolean }) {
  const { t, i18n } = useTranslation('charts');
  const language = i18n.language;
  const style = chartStyle(present);
  const ref = useRef<HTMLElement>(null);
  const config = useApp((s) => s.config);
  const setNotice = useApp((s) => s.setNotice);
  const { rows, lines } = useMemo(() => heldOutSeries(runs), [runs]);
  const title = heldOutTitle(runs.length > 0 ? runs.map((r) => r.config.task) : [config.task]);
  const ticks = useMemo(() => {
    let lo = Infinity;
    let hi = -Infinity;
    for (const row of rows) {
      for (const [k, v] of Object.entries(row)) {
        if (k !== 'iter') {
          lo = Math.min(lo, v);
          hi = Math.max(hi, v);
        }
      }
    }
    if (!Number.isFinite(lo)) return [0, 1];
    const ticks = niceTicks(lo, hi);
    // Rates (the usual held-out metrics) stay within [0, 1]: no axis below 0 or above 1 for them.
    const inUnit = ticks.filter((t) => t >= 0 && t <= 1);
    return lo >= 0 && hi <= 1 && inUnit.length >= 2 ? inUnit : ticks;
  }, [rows]);
  const activeRunId = useApp((s) => s.activeRunId);
  // The run training now, else the last run shown that has a timed evaluation.
  const latestOf = runs.find((r) => r.id === activeRunId) ?? [...runs].reverse().find((r) => r.evals?.some((e) => typeof e.seconds === 'number')) ?? null;
  const caption = heldOutCaption(runs, config, latestOf);
  // For screen readers: each run's latest sampled score and its trend over the last evaluations.
  // biome-ignore lint/correctness/useExhaustiveDependencies: `language` is the trigger: the summary is worded in it
  const summary = useMemo(
    () =>
      chartSummary(
        title,
        runs.map((r) => {
          const key = heldOutKey(r.config.task, r.evals ?? []);
          return { name: r.name, points: key ? extract(r.evals ?? [], key) : [] };
        }),
        'evaluations',
      ),
    [title, runs, language],
  );
  const fs = useChartFullscreen();
  return (
    <figure
      className={`chart-card card${fs.full ? ' fullscreen' : ''}`}
      ref={ref}
      data-testid="chart-heldout"
      aria-label={t('panel.chartLabel', { title })}
      aria-describedby="chart-summary-heldout"
    >
      <p className="visually-hidden" id="chart-summary-heldout" data-testid="chart-summary-heldout">
        {summary}
      </p>
      <div className="chart-head">
        <h3>{title}</h3>
        <ChartHelpButton metric={HELD_OUT_KEY} title={title} />
        <button
          type="button"
          className="btn ghost small png"
          disabled={rows.length === 0}
          aria-label={t('panel.downloadPng', { title })}
          onClick={() => void downloadChartPng(ref.current!, title).catch((e: unknown) => setNotice({ tone: 'error', text: String(e) }))}
        >
          {t('panel.png')}
        </button>
        <FullscreenButton fs={fs} title={title} />
      </div>
      {rows.length === 0 ? (
        <div className="chart-empty">{config.evalEvery > 0 ? t('heldOut.emptyPending') : t('heldOut.emptyOff')}</div>
      ) : (
        <ChartLegend title={title} runs={lines.map((l) => l.run)} />
      )}
      {rows.length === 0 ? null : (
        <ResponsiveContainer width="100%" height={fs.full ? fs.height : style.height}>
          <LineChart data={rows} margin={{ top: 4, right: style.right, bottom: 0, left: 0 }}>
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
              labelFormatter={(l) => t('heldOut.tooltipAfter', { iter: formatIteration(l) })}
              isAnimationActive={false}
            />
            {lines.flatMap(({ run, greedy, pass }) => [
              <Line
                key={run.id}
                dataKey={run.id}
                name={t('heldOut.sampled', { name: run.name })}
                stroke={run.color}
                strokeWidth={style.line}
                dot={{ r: style.dot - 0.5 }}
                isAnimationActive={false}
                connectNulls
              />,
              ...(greedy ? [companionLine(greedyId(run.id), t('heldOut.greedy', { name: run.name }), run.color, style.line, '5 3')] : []),
              ...(pass ? [companionLine(passId(run.id), t('heldOut.passAtK', { name: run.name, k: EVAL_SAMPLES_PER_PROMPT }), run.color, style.line, '1 3')] : []),
            ])}
          </LineChart>
        </ResponsiveContainer>
      )}
      <figcaption className="chart-note" data-testid="chart-note-heldout">
        {t('heldOut.caption', { draws: formatNumber(EVAL_SAMPLES_PER_PROMPT), scope: caption.scope })}
        {lines.some((l) => l.pass) ? ` ${t('heldOut.passCaption', { k: EVAL_SAMPLES_PER_PROMPT })}` : null}
        {caption.took ? (
          <>
            {' '}
            <span data-testid="eval-took">{t('heldOut.tookSentence', { took: caption.took[0].toUpperCase() + caption.took.slice(1) })}</span>
          </>
        ) : null}
      </figcaption>
    </figure>
  );
});
