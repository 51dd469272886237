// A chart's own legend: each line's colour and run name ("ε = 0.05"), so a chart scrolled far from
// the run list still says which colour is which (and a PNG of one chart carries its legend).
import { useTranslation } from 'react-i18next';
import type { RunRecord } from '../../store/runs.ts';

export function ChartLegend({ title, runs }: { title: string; runs: readonly Pick<RunRecord, 'id' | 'name' | 'color'>[] }) {
  const { t } = useTranslation('charts');
  if (runs.length === 0) return null;
  return (
    <ul className="chart-legend" aria-label={t('panel.legend', { title })} data-testid="chart-legend">
      {runs.map((r) => (
        <li key={r.id}>
          <span className="line-swatch" style={{ background: r.color }} aria-hidden="true" />
          {r.name}
        </li>
      ))}
    </ul>
  );
}
