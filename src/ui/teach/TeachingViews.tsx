// Tabbed teaching views below the charts: Clipping, KL shaping, Samples, Three policies, Human feedback, Inspect.
import { type KeyboardEvent, useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useInspection } from '../../store/inspection.ts';
import { tabForKey } from '../a11y/tabs.ts';
import { Inspector } from '../inspect/Inspector.tsx';
import { BatchRunPicker } from './BatchRunPicker.tsx';
import { ClippingView } from './ClippingView.tsx';
import { FeedbackView } from './FeedbackView.tsx';
import { HackedSampleOffer } from './HackedSampleOffer.tsx';
import { KlShapingView } from './KlShapingView.tsx';
import { SamplesView } from './SamplesView.tsx';
import { ThreePoliciesView } from './ThreePoliciesView.tsx';

// Each tab's name is teach:tabs.<id>.
const VIEWS = [
  { id: 'clipping', Component: ClippingView },
  { id: 'kl', Component: KlShapingView },
  { id: 'samples', Component: SamplesView },
  { id: 'policies', Component: ThreePoliciesView },
  { id: 'feedback', Component: FeedbackView },
  { id: 'inspect', Component: Inspector },
] as const;

export function TeachingViews() {
  const { t } = useTranslation('teach');
  const [tab, setTab] = useState<(typeof VIEWS)[number]['id']>('clipping');
  const tabs = useRef<(HTMLButtonElement | null)[]>([]);
  const View = VIEWS.find((v) => v.id === tab)!.Component;
  // A view asking the inspector for a token (the clipping view's links) opens the Inspect tab.
  const focusN = useInspection((s) => s.focus?.n ?? 0);
  const seenFocus = useRef(focusN);
  useEffect(() => {
    if (focusN !== seenFocus.current) setTab('inspect');
    seenFocus.current = focusN;
  }, [focusN]);
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
    <section className="teaching card" aria-label={t('tabs.label')}>
      <HackedSampleOffer onOpen={() => setTab('inspect')} />
      <div className="tabs" role="tablist" aria-label={t('tabs.label')}>
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
            {t(`tabs.${v.id}`)}
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
