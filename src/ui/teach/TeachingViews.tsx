// Tabbed teaching views below the charts: Clipping, KL shaping, Samples, Three policies, Human feedback, Inspect.
import { type KeyboardEvent, useRef, useState } from 'react';
import { tabForKey } from '../a11y/tabs.ts';
import { Inspector } from '../inspect/Inspector.tsx';
import { INSPECT_TEXT } from '../inspect/text.ts';
import { BatchRunPicker } from './BatchRunPicker.tsx';
import { ClippingView } from './ClippingView.tsx';
import { FeedbackView } from './FeedbackView.tsx';
import { HackedSampleOffer } from './HackedSampleOffer.tsx';
import { KlShapingView } from './KlShapingView.tsx';
import { SamplesView } from './SamplesView.tsx';
import { ThreePoliciesView } from './ThreePoliciesView.tsx';

const VIEWS = [
  { id: 'clipping', title: 'Clipping', Component: ClippingView },
  { id: 'kl', title: 'KL shaping', Component: KlShapingView },
  { id: 'samples', title: 'Samples', Component: SamplesView },
  { id: 'policies', title: 'Three policies', Component: ThreePoliciesView },
  { id: 'feedback', title: 'Human feedback', Component: FeedbackView },
  { id: 'inspect', title: INSPECT_TEXT.tab, Component: Inspector },
] as const;

export function TeachingViews() {
  const [tab, setTab] = useState<(typeof VIEWS)[number]['id']>('clipping');
  const tabs = useRef<(HTMLButtonElement | null)[]>([]);
  const View = VIEWS.find((v) => v.id === tab)!.Component;
  // The WAI-ARIA tabs pattern: one Tab stop for the whole list (the selected tab), arrows move and select.
  const onKey = (e: KeyboardEvent<HTMLButtonElement>) => {
    const next = tabForKey(
      e.key,
      VIEWS.findIndex((v) => v.id === tab),
      VIEWS.length,
    );
    if (next === null) return;
    e.preventDefault();
    setTab(VIEWS[next].id);
    tabs.current[next]?.focus();
  };
  return (
    <section className="teaching card" aria-label="Teaching views">
      <HackedSampleOffer onOpen={() => setTab('inspect')} />
      <div className="tabs" role="tablist" aria-label="Teaching views">
        {VIEWS.map((v, i) => (
          <button
            key={v.id}
            ref={(el) => {
              tabs.current[i] = el;
            }}
            type="button"
            role="tab"
            className="tab"
            id={`tab-${v.id}`}
            aria-selected={tab === v.id}
            aria-controls="teach-panel"
            tabIndex={tab === v.id ? 0 : -1}
            onClick={() => setTab(v.id)}
            onKeyDown={onKey}
          >
            {v.title}
          </button>
        ))}
      </div>
      <div role="tabpanel" id="teach-panel" aria-labelledby={`tab-${tab}`}>
        {/* The inspector reads captured traces, not the runs' latest batches. */}
        {tab === 'inspect' ? null : <BatchRunPicker />}
        <View />
      </div>
    </section>
  );
}
