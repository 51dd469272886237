// The advantage step's reverse scan, animated from the last token back to the first: each
// position's A_t from its δ_t and the carried A_{t+1}; a masked position passes the carry through.
// Plays on its own unless the user prefers reduced motion; it can always be stepped by hand.
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { ScanStep } from '../../rl/inspect/index.ts';
import { Formula } from '../math/Formula.tsx';
import { formatNumber, fullNumber } from './format.ts';
import { scanStepTex } from './steps.ts';

const STEP_MS = 900;

export function prefersReducedMotion(): boolean {
  try {
    return typeof window !== 'undefined' && window.matchMedia('(prefers-reduced-motion: reduce)').matches;
  } catch {
    return false;
  }
}

export interface GaeScanProps {
  steps: ScanStep[];
  gae: boolean;
  gamma: number;
  /** Index into steps of the position shown (0 = the last token). */
  at: number;
  onAt(i: number): void;
}

export function GaeScan({ steps, gae, gamma, at, onAt }: GaeScanProps) {
  const { t: tr } = useTranslation('inspect');
  const reduced = prefersReducedMotion();
  const [playing, setPlaying] = useState(!reduced);
  const last = steps.length - 1;
  useEffect(() => {
    if (!playing) return;
    if (at >= last) {
      setPlaying(false);
      return;
    }
    const id = window.setTimeout(() => onAt(at + 1), STEP_MS);
    return () => window.clearTimeout(id);
  }, [playing, at, last, onAt]);
  const step = steps[Math.min(at, last)];
  if (!step) return null;
  const byT = [...steps].sort((a, b) => a.t - b.t);
  return (
    <section className="gae-scan" aria-label={tr('scan.heading')}>
      <div className="gae-scan-head">
        <strong>{tr('scan.heading')}</strong>
        <div className="btn-row">
          <button
            type="button"
            className="btn small"
            onClick={() => {
              if (at >= last) onAt(0);
              setPlaying(!playing);
            }}
          >
            {playing ? tr('scan.pause') : tr('scan.play')}
          </button>
          <button
            type="button"
            className="btn small"
            disabled={at <= 0}
            onClick={() => {
              setPlaying(false);
              onAt(at - 1);
            }}
          >
            {tr('scan.back')}
          </button>
          <button
            type="button"
            className="btn small"
            disabled={at >= last}
            onClick={() => {
              setPlaying(false);
              onAt(at + 1);
            }}
          >
            {tr('scan.forward')}
          </button>
          <button
            type="button"
            className="btn small"
            onClick={() => {
              setPlaying(false);
              onAt(0);
            }}
          >
            {tr('scan.restart')}
          </button>
        </div>
      </div>
      {reduced && <p className="muted small">{tr('scan.reduced')}</p>}
      <ol className="gae-strip">
        {byT.map((s) => {
          const done = s.t >= step.t;
          const cls = ['gae-cell', s.masked ? 'masked' : '', s.t === step.t ? 'current' : '', done ? 'done' : ''].filter(Boolean).join(' ');
          return (
            <li key={s.t} className={cls} aria-current={s.t === step.t ? 'step' : undefined}>
              <span className="gae-t">{tr('scan.position', { t: s.t })}</span>
              <span className="gae-a num" title={done ? fullNumber(s.advantage) : undefined}>
                {done ? formatNumber(s.advantage) : '·'}
              </span>
            </li>
          );
        })}
      </ol>
      <div aria-live="polite">
        <p className="small">
          {tr('scan.position', { t: step.t })}
          {step.masked ? ` — ${tr('scan.carry')}` : ''}
          {at >= last ? ` ${tr('scan.done')}` : ''}
        </p>
        <Formula tex={scanStepTex(step, gae, gamma)} display />
      </div>
    </section>
  );
}
