// One metric's chart alone (`?embed=chart:<metric>`), every visible run overlaid as on the page (or
// the runs given: a run of your own model read from `?run=`), its plot as tall as the frame leaves
// once the title and the legend are placed.
import { useLayoutEffect, useMemo, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { MetricName } from '../../rl/metricNames.ts';
import { useApp } from '../../store/appStore.ts';
import type { ChartRun } from '../charts/chartRun.ts';
import { MetricChart } from '../charts/MetricChart.tsx';

/** Below this the plot is not worth drawing: the frame scrolls instead. */
const MIN_PLOT = 120;

export default function EmbedChart({ metric, runs: given }: { metric: MetricName; runs?: readonly ChartRun[] }) {
  const { t } = useTranslation('charts');
  const runs = useApp((s) => s.runs);
  const smoothing = useApp((s) => s.smoothing);
  const visible = useMemo(() => given ?? runs.filter((r) => r.visible), [given, runs]);
  const box = useRef<HTMLDivElement>(null);
  const [plot, setPlot] = useState(MIN_PLOT);
  useLayoutEffect(() => {
    const el = box.current;
    if (!el) return;
    const refit = () => {
      const fig = el.querySelector('figure');
      if (!fig) return;
      const plotNow = fig.querySelector('.recharts-responsive-container')?.clientHeight ?? 0;
      const around = fig.offsetHeight - plotNow; // title, legend, note: what the plot shares the frame with
      setPlot((p) => {
        const next = Math.max(MIN_PLOT, Math.floor(el.clientHeight - around));
        return Math.abs(next - p) > 1 ? next : p;
      });
    };
    refit();
    const ro = new ResizeObserver(refit);
    ro.observe(el);
    const fig = el.querySelector('figure');
    if (fig) ro.observe(fig);
    return () => ro.disconnect();
  }, []);
  return (
    <div className="embed-chart" ref={box} data-testid="embed-chart">
      <MetricChart title={t(`titles.${metric}`)} metric={metric} runs={visible} smoothing={smoothing} present height={plot} />
    </div>
  );
}
