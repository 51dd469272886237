// A chart's own legend: each line's colour and run name ("ε = 0.05"), so a chart scrolled far from
// the run list still says which colour is which (and a PNG of one chart carries its legend).
import { useTranslation } from 'react-i18next';
import type { ChartRun } from './chartRun.ts';

export function ChartLegend({ title, runs }: { title: string; runs: readonly Pick<ChartRun, 'id' | 'name' | 'color' | 'dashed'>[] }) {
  const { t } = useTranslation('charts');
  if (runs.length === 0) return null;
  return (
    <ul className="chart-legend" aria-label={t('panel.legend', { title })} data-testid="chart-legend">
      {runs.map((r) => (
        <li key={r.id}>
          <span className={`line-swatch${r.dashed ? ' dashed' : ''}`} style={{ color: r.color, background: r.dashed ? undefined : r.color }} aria-hidden="true" />
          {r.name}
        </li>
      ))}
    </ul>
  );
}
