// The own-model run's curves, drawn by the playground's chart (MetricChart.tsx: its "?" help, PNG,
// full screen, smoothing, notes): reward, losses, clip fraction, KL and response length from the
// trainer's rows, the same numbers the table lists. Earlier runs of the open model (a fresh run's
// predecessors, "Run both"'s first arm) are drawn beside the current one, dashed, each named by its
// preset or its settings (hfChartRun.ts); the toolbar smooths and exports them as CSV.
import { useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import { HF_PRESETS } from '../../rl/hf/hfPresets.ts';
import type { HfTrainRow, HfTrainSettings } from '../../rl/hf/hfTrainSettings.ts';
import { useApp } from '../../store/appStore.ts';
import { downloadBlob } from '../../store/download.ts';
import { metricsToCsv } from '../../store/exportMetrics.ts';
import type { HfComparedRun } from '../../store/hfTrain.ts';
import { RUN_COLORS } from '../../store/runs.ts';
import { CHARTS, PRESENTER_METRICS } from '../charts/chartList.ts';
import type { ChartRun } from '../charts/chartRun.ts';
import { MetricChart } from '../charts/MetricChart.tsx';
import { SmoothingSlider } from '../charts/SmoothingSlider.tsx';
import { usePresenter } from '../presenter.ts';
import { hfChartRun, hfRunsChart } from './hfChartRun.ts';

/** The preset a run's settings are (iterations and seed aside: Run both sets them), if any. */
export function presetOfSettings(s: HfTrainSettings) {
  return HF_PRESETS.find((p) => (Object.keys(p.settings) as (keyof HfTrainSettings)[]).every((k) => k === 'iterations' || k === 'seed' || p.settings[k] === s[k]));
}

/** A run's name on the charts: its preset's, else its estimator, learning rate and β. */
export function useRunLabel() {
  const { t } = useTranslation('notices');
  return (s: HfTrainSettings) => {
    const preset = presetOfSettings(s);
    return preset ? t(`hf.train.preset.${preset.id}.name`) : t('hf.train.runLabel', { estimator: s.estimator, lr: s.lr, beta: s.klCoef });
  };
}

/** The file name's date and time, as the playground's exports write it. */
const stamp = () => new Date().toISOString().slice(0, 19).replace(/[:T]/g, '-');

export function HfTrainCharts({
  rows,
  settings,
  compared = [],
  onClearCompared,
  idPrefix = 'hf-train-',
}: {
  rows: readonly HfTrainRow[];
  /** The settings the rows were trained with (names the current run beside earlier ones). */
  settings?: HfTrainSettings | null;
  /** Earlier runs of the open model, oldest first. */
  compared?: readonly HfComparedRun[];
  onClearCompared?: () => void;
  /** Before the charts' ids: the live run's and a recorded run's charts can be on the page together. */
  idPrefix?: string;
}) {
  const { t, i18n } = useTranslation('notices');
  const { t: tc } = useTranslation('charts');
  const label = useRunLabel();
  const smoothing = useApp((s) => s.smoothing);
  const present = usePresenter();
  const language = i18n.language;
  // biome-ignore lint/correctness/useExhaustiveDependencies: `language` is the trigger: the names are worded in it (label follows it)
  const runs = useMemo((): ChartRun[] => {
    const earlier = compared.filter((c) => c.rows.length > 0);
    return [
      ...earlier.map((c, i) =>
        hfChartRun({ id: `c${i}`, name: label(c.settings), color: RUN_COLORS[(i + 1) % RUN_COLORS.length], rows: c.rows, settings: c.settings, dashed: true }),
      ),
      ...(rows.length > 0
        ? [
            hfChartRun({
              id: 'now',
              name: settings ? t('hf.train.runNow', { run: label(settings) }) : t('hf.train.runNowPlain'),
              color: RUN_COLORS[0],
              rows,
              settings: settings ?? null,
            }),
          ]
        : []),
    ];
  }, [rows, settings, compared, language]);
  if (runs.length === 0) return null;
  // Presenter mode keeps the playground's lecture charts (reward, clip fraction, KL).
  const charts = CHARTS.filter((c) => hfRunsChart(c.metric, runs) && (!present || PRESENTER_METRICS.includes(c.metric)));
  const earlier = runs.filter((r) => r.dashed);
  return (
    <>
      <div className="hf-train-charts-tools toolbar">
        <SmoothingSlider />
        <button
          type="button"
          className="btn small"
          data-testid={`${idPrefix}export-csv`}
          onClick={() => downloadBlob(new Blob([metricsToCsv(runs)], { type: 'text/csv' }), `own-model-metrics-${stamp()}.csv`)}
        >
          {tc('panel.exportCsv')}
        </button>
      </div>
      <div className="chart-grid hf-train-charts" data-testid={`${idPrefix}charts`}>
        {charts.map((c) => (
          <MetricChart key={c.metric} title={c.title} metric={c.metric} runs={runs} smoothing={smoothing} present={present} idPrefix={idPrefix} headingLevel={5} />
        ))}
      </div>
      {earlier.length > 0 ? (
        <div className="hf-train-legend small" data-testid="hf-train-legend">
          <ul aria-label={t('hf.train.legend')}>
            {runs.map((r) => (
              <li key={r.id} data-series={r.id}>
                <svg width="22" height="8" aria-hidden="true">
                  <line x1="1" y1="4" x2="21" y2="4" stroke={r.color} strokeWidth="2" strokeDasharray={r.dashed ? '5 3' : undefined} />
                </svg>{' '}
                {r.name} <span className="muted">{t('hf.train.legendIterations', { count: r.metrics.length })}</span>
              </li>
            ))}
          </ul>
          {onClearCompared ? (
            <button type="button" className="btn small" onClick={onClearCompared} data-testid="hf-train-clear-compared">
              {t('hf.train.clearCompared')}
            </button>
          ) : null}
        </div>
      ) : null}
    </>
  );
}
