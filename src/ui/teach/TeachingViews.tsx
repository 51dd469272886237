// Tabbed teaching views below the charts: Clipping, KL shaping, Samples, Three policies, Human feedback, Inspect.
import { useState } from 'react';
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
  const View = VIEWS.find((v) => v.id === tab)!.Component;
  return (
    <section className="teaching card" aria-label="Teaching views">
      <HackedSampleOffer onOpen={() => setTab('inspect')} />
      <div className="tabs" role="tablist">
        {VIEWS.map((v) => (
          <button key={v.id} type="button" role="tab" className="tab" id={`tab-${v.id}`} aria-selected={tab === v.id} aria-controls="teach-panel" onClick={() => setTab(v.id)}>
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
