// The own-model run's curves: reward_mean and kl per iteration, the trainer's numbers as the table
// lists them, drawn as the playground's charts are (recharts, no animation).
import { useTranslation } from 'react-i18next';
import { CartesianGrid, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import type { HfTrainRow } from '../../rl/hf/hfTrainSettings.ts';

const CURVES = ['reward_mean', 'kl'] as const;

export function HfTrainCharts({ rows }: { rows: readonly HfTrainRow[] }) {
  const { t } = useTranslation('notices');
  if (rows.length < 2) return null;
  return (
    <div className="hf-train-charts" data-testid="hf-train-charts">
      {CURVES.map((name) => (
        <figure key={name} className="hf-train-chart" data-testid={`hf-train-chart-${name}`}>
          <figcaption className="small">{name}</figcaption>
          <ResponsiveContainer width="100%" height={120}>
            <LineChart data={rows as HfTrainRow[]} margin={{ top: 4, right: 8, bottom: 0, left: 0 }} accessibilityLayer>
              <CartesianGrid stroke="var(--border)" vertical={false} />
              <XAxis dataKey="iter" type="number" domain={['dataMin', 'dataMax']} allowDecimals={false} tick={{ fontSize: 11 }} tickLine={false} />
              <YAxis width={48} tick={{ fontSize: 11 }} tickLine={false} />
              <Tooltip formatter={(v) => (typeof v === 'number' ? v.toPrecision(4) : String(v))} labelFormatter={(iter) => t('hf.train.chartIter', { iter })} />
              <Line dataKey={name} stroke="var(--accent, #4f46e5)" strokeWidth={1.6} dot={false} isAnimationActive={false} />
            </LineChart>
          </ResponsiveContainer>
        </figure>
      ))}
    </div>
  );
}
