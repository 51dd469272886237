// The playground layout: controls and settings on the left, live charts and teaching views on the right.
import { lazy, Suspense } from 'react';
import { useTranslation } from 'react-i18next';
import { CheckpointPanel } from './CheckpointPanel.tsx';
import { ConfigPanel } from './ConfigPanel.tsx';
import { Controls } from './Controls.tsx';
import { usePresenter } from './presenter.ts';
import { Presets } from './Presets.tsx';
import { ResumeBanner } from './ResumeBanner.tsx';
import { SftPanel } from './SftPanel.tsx';
import { useUrlSync } from './useUrlSync.ts';

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

export function Playground() {
  const { t } = useTranslation('common');
  const urlProblems = useUrlSync();
  const presenting = usePresenter();
  return (
    <div className="playground" data-testid="playground">
      {urlProblems.length > 0 ? (
        <div className="notice warn url-problems" role="alert" data-testid="url-problems">
          <strong>{t('playground.urlProblems')}</strong>
          <ul>
            {urlProblems.map((p) => (
              <li key={p}>{p}</li>
            ))}
          </ul>
        </div>
      ) : null}
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
}
