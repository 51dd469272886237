// The playground layout: controls and settings on the left, live charts and teaching views on the right.
import { lazy, memo, Suspense } from 'react';
import { useTranslation } from 'react-i18next';
import { CheckpointPanel } from './CheckpointPanel.tsx';
import { ConfigPanel } from './ConfigPanel.tsx';
import { Controls } from './Controls.tsx';
import { usePresenter } from './presenter.ts';
import { Presets } from './Presets.tsx';
import { ResumeBanner } from './ResumeBanner.tsx';
import { SftPanel } from './SftPanel.tsx';
import { UrlProblems } from './UrlProblems.tsx';

// Loaded on demand so the first chunk stays small: the charts (recharts), the teaching views and
// the "Scale it up" export each arrive in their own chunk right after the first paint.
const ChartsPanel = lazy(() => import('./charts/ChartsPanel.tsx').then((m) => ({ default: m.ChartsPanel })));
const TeachingViews = lazy(() => import('./teach/TeachingViews.tsx').then((m) => ({ default: m.TeachingViews })));
const ScaleUpPanel = lazy(() => import('./ScaleUpPanel.tsx'));

const loading = (text: string) => (
  <div className="card muted small" aria-busy="true">
    {text}
  </div>
);

/** Memoised: the header's state (the GPU badge, the linked run's restore) changes without re-rendering it. */
export const Playground = memo(function Playground() {
  const { t } = useTranslation('common');
  const presenting = usePresenter();
  return (
    <div className="playground" data-testid="playground">
      <UrlProblems />
      <ResumeBanner />
      <Controls />
      <div className="layout">
        <aside className="sidebar">
          <Presets />
          <CheckpointPanel />
          <ConfigPanel />
        </aside>
        <div className="content" id="charts-and-views" tabIndex={-1}>
          {presenting ? null : <SftPanel />}
          <Suspense fallback={loading(t('playground.loadingCharts'))}>
            <ChartsPanel />
          </Suspense>
          <Suspense fallback={loading(t('playground.loadingTeachingViews'))}>
            <TeachingViews />
          </Suspense>
          {/* A lecture opens on the charts and the teaching views; stage 1 (SFT) follows them. */}
          {presenting ? <SftPanel /> : null}
          <Suspense fallback={loading(t('playground.loadingScaleUp'))}>
            <ScaleUpPanel />
          </Suspense>
        </div>
      </div>
    </div>
  );
});
