// The playground layout: controls and settings on the left, live charts and teaching views on the right.
import { lazy, Suspense } from 'react';
import { CheckpointPanel } from './CheckpointPanel.tsx';
import { ConfigPanel } from './ConfigPanel.tsx';
import { Controls } from './Controls.tsx';
import { Presets } from './Presets.tsx';
import { ResumeBanner } from './ResumeBanner.tsx';
import { SftPanel } from './SftPanel.tsx';
import { useUrlSync } from './useUrlSync.ts';

// Loaded on demand so the first chunk stays small: the charts (recharts), the teaching views and
// the "Scale it up" export each arrive in their own chunk right after the first paint.
const ChartsPanel = lazy(() => import('./charts/ChartsPanel.tsx').then((m) => ({ default: m.ChartsPanel })));
const TeachingViews = lazy(() => import('./teach/TeachingViews.tsx').then((m) => ({ default: m.TeachingViews })));
const ScaleUpPanel = lazy(() => import('./ScaleUpPanel.tsx'));

const loading = (what: string) => (
  <div className="card muted small" aria-busy="true">
    Loading {what}…
  </div>
);

export function Playground() {
  const urlProblems = useUrlSync();
  return (
    <div className="playground" data-testid="playground">
      {urlProblems.length > 0 ? (
        <div className="notice warn url-problems" role="alert" data-testid="url-problems">
          <strong>Some settings in the link were not applied:</strong>
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
          <SftPanel />
          <Suspense fallback={loading('charts')}>
            <ChartsPanel />
          </Suspense>
          <Suspense fallback={loading('teaching views')}>
            <TeachingViews />
          </Suspense>
          <Suspense fallback={loading('Scale it up')}>
            <ScaleUpPanel />
          </Suspense>
        </div>
      </div>
    </div>
  );
}
