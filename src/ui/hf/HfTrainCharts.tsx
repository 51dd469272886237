// The own-model run's curves: reward_mean and kl per iteration, the trainer's numbers as the table
// lists them, drawn as the playground's charts are (recharts, no animation); earlier runs of the
// open model (a fresh run's predecessors, "Run both"'s first arm) drawn beside them, dashed, each
// named in a legend by its preset or its settings.
import { useTranslation } from 'react-i18next';
import { CartesianGrid, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { HF_PRESETS } from '../../rl/hf/hfPresets.ts';
import type { HfTrainRow, HfTrainSettings } from '../../rl/hf/hfTrainSettings.ts';
import type { HfComparedRun } from '../../store/hfTrain.ts';
import { RUN_COLORS } from '../../store/runs.ts';

const CURVES = ['reward_mean', 'kl'] as const;

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

interface Series {
  key: string;
  label: string;
  color: string;
  dashed: boolean;
  rows: readonly HfTrainRow[];
}

export function HfTrainCharts({
  rows,
  settings,
  compared = [],
  onClearCompared,
}: {
  rows: readonly HfTrainRow[];
  /** The settings the rows were trained with (names the current run beside earlier ones). */
  settings?: HfTrainSettings | null;
  /** Earlier runs of the open model, oldest first. */
  compared?: readonly HfComparedRun[];
  onClearCompared?: () => void;
}) {
  const { t } = useTranslation('notices');
  const label = useRunLabel();
  const earlier = compared.filter((c) => c.rows.length > 0);
  if (rows.length < 2 && earlier.length === 0) return null;
  const series: Series[] = [
    ...earlier.map((c, i) => ({ key: `c${i}`, label: label(c.settings), color: RUN_COLORS[(i + 1) % RUN_COLORS.length], dashed: true, rows: c.rows })),
    { key: 'now', label: settings ? t('hf.train.runNow', { run: label(settings) }) : t('hf.train.runNowPlain'), color: RUN_COLORS[0], dashed: false, rows },
  ];
  return (
    <>
      <div className="hf-train-charts" data-testid="hf-train-charts">
        {CURVES.map((name) => (
          <figure key={name} className="hf-train-chart" data-testid={`hf-train-chart-${name}`}>
            <figcaption className="small">{name}</figcaption>
            <ResponsiveContainer width="100%" height={120}>
              <LineChart margin={{ top: 4, right: 8, bottom: 0, left: 0 }} accessibilityLayer>
                <CartesianGrid stroke="var(--border)" vertical={false} />
                <XAxis
                  dataKey="iter"
                  type="number"
                  domain={['dataMin', 'dataMax']}
                  allowDecimals={false}
                  allowDuplicatedCategory={false}
                  tick={{ fontSize: 11 }}
                  tickLine={false}
                />
                <YAxis width={48} tick={{ fontSize: 11 }} tickLine={false} />
                <Tooltip formatter={(v) => (typeof v === 'number' ? v.toPrecision(4) : String(v))} labelFormatter={(iter) => t('hf.train.chartIter', { iter })} />
                {series.map((s) => (
                  <Line
                    key={s.key}
                    data={s.rows as HfTrainRow[]}
                    dataKey={name}
                    name={s.label}
                    stroke={s.color}
                    strokeWidth={s.dashed ? 1.3 : 1.6}
                    strokeDasharray={s.dashed ? '5 3' : undefined}
                    // a run of one iteration is a point, drawn as one
                    dot={s.rows.length === 1 ? { r: 3, fill: s.color, stroke: s.color } : false}
                    isAnimationActive={false}
                  />
                ))}
              </LineChart>
            </ResponsiveContainer>
          </figure>
        ))}
      </div>
      {earlier.length > 0 ? (
        <div className="hf-train-legend small" data-testid="hf-train-legend">
          <ul aria-label={t('hf.train.legend')}>
            {series.map((s) => (
              <li key={s.key} data-series={s.key}>
                <svg width="22" height="8" aria-hidden="true">
                  <line x1="1" y1="4" x2="21" y2="4" stroke={s.color} strokeWidth="2" strokeDasharray={s.dashed ? '5 3' : undefined} />
                </svg>{' '}
                {s.label} <span className="muted">{t('hf.train.legendIterations', { count: s.rows.length })}</span>
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
