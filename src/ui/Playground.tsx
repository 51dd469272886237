// The playground layout: controls and settings on the left, live charts and teaching views on the right.
import { ChartsPanel } from './charts/ChartsPanel.tsx';
import { CheckpointPanel } from './CheckpointPanel.tsx';
import { ConfigPanel } from './ConfigPanel.tsx';
import { Controls } from './Controls.tsx';
import { Presets } from './Presets.tsx';
import { ScaleUpPanel } from './ScaleUpPanel.tsx';
import { TeachingViews } from './teach/TeachingViews.tsx';
import { useUrlSync } from './useUrlSync.ts';

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
      <Controls />
      <div className="layout">
        <aside className="sidebar">
          <Presets />
          <CheckpointPanel />
          <ConfigPanel />
        </aside>
        <div className="content">
          <ChartsPanel />
          <TeachingViews />
          <ScaleUpPanel />
        </div>
      </div>
    </div>
  );
}
