// The "?" beside a chart's title: a disclosure with the chart's formula, what a healthy and a sick
// curve look like and the metric's name in verl's and OpenRLHF's logs. Escape, the close button,
// a second press or a click elsewhere closes it; focus returns to the "?". Its text is in the
// lazily loaded `charts` namespace: useTranslation suspends until it is there and re-renders the
// popover on a language switch.
import { useEffect, useId, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Formula } from '../math/Formula.tsx';
import { CHART_HELP, HELP_UI, type EngineMetric, type TeachViewKey } from './chartHelpText.ts';

function Engine({ label, m }: { label: string; m: EngineMetric }) {
  return (
    <li>
      <span className="engine">{label}</span> {m.name ? <code>{m.name}</code> : <em>{HELP_UI.noCounterpart}</em>}
      {m.note ? <span className="muted"> — {m.note}</span> : null}
    </li>
  );
}

export function ChartHelpButton({ metric, title, testIdPrefix = '', note }: { metric: string; title: string; testIdPrefix?: string; note?: string }) {
  useTranslation('charts');
  const help = Object.hasOwn(CHART_HELP, metric) ? CHART_HELP[metric] : undefined;
  const [open, setOpen] = useState(false);
  const id = useId();
  const button = useRef<HTMLButtonElement>(null);
  const panel = useRef<HTMLElement>(null);
  useEffect(() => {
    if (!open) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== 'Escape') return;
      e.stopPropagation();
      setOpen(false);
      button.current?.focus();
    };
    const onPointer = (e: PointerEvent) => {
      const t = e.target as Node;
      if (!panel.current?.contains(t) && !button.current?.contains(t)) setOpen(false);
    };
    document.addEventListener('keydown', onKey);
    document.addEventListener('pointerdown', onPointer);
    return () => {
      document.removeEventListener('keydown', onKey);
      document.removeEventListener('pointerdown', onPointer);
    };
  }, [open]);
  if (!help) return null;
  return (
    <>
      <button
        ref={button}
        type="button"
        className={`btn ghost small help-toggle${open ? ' open' : ''}`}
        aria-expanded={open}
        aria-controls={id}
        aria-label={HELP_UI.open(title)}
        data-testid={`${testIdPrefix}chart-help-${metric}`}
        onClick={() => setOpen((o) => !o)}
      >
        ?
      </button>
      {open ? (
        <section ref={panel} id={id} className="chart-help" aria-label={HELP_UI.open(title)} data-testid={`${testIdPrefix}chart-help-panel-${metric}`}>
          <p className="chart-help-what">{help.what}</p>
          {note ? (
            <p className="chart-help-note" data-testid={`${testIdPrefix}chart-help-note-${metric}`}>
              {note}
            </p>
          ) : null}
          <Formula tex={help.formula} display label={HELP_UI.formula(title)} />
          <dl>
            <dt className="healthy">{HELP_UI.healthy}</dt>
            <dd>{help.healthy}</dd>
            <dt className="sick">{HELP_UI.sick}</dt>
            <dd>{help.sick}</dd>
            <dt>{HELP_UI.engines}</dt>
            <dd>
              <ul className="engine-names">
                <Engine label={HELP_UI.verl} m={help.verl} />
                <Engine label={HELP_UI.openrlhf} m={help.openrlhf} />
              </ul>
            </dd>
          </dl>
          <button
            type="button"
            className="btn small"
            onClick={() => {
              setOpen(false);
              button.current?.focus();
            }}
          >
            {HELP_UI.close}
          </button>
        </section>
      ) : null}
    </>
  );
}

/**
 * The "?" of a teaching view (clipping, KL shaping), right-aligned at the view's top: the view
 * (.teach-view) anchors the panel as a chart card does.
 */
export function ViewHelp({ view, title }: { view: TeachViewKey; title: string }) {
  return (
    <div className="view-help">
      <ChartHelpButton metric={view} title={title} />
    </div>
  );
}
