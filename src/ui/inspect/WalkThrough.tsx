// "Walk through this iteration": the eight steps from rollout to the optimiser step, each with
// its formula in symbols and with this response's numbers at the selected token, why it is done,
// and the verl and OpenRLHF functions that do the same. The advantage step shows the reverse scan.
import { useId, useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import { FORMULA_STEPS, gaeScanSteps, type IterationTrace, type RecomputedTrace } from '../../rl/inspect/index.ts';
import { Formula } from '../math/Formula.tsx';
import { GaeScan } from './GaeScan.tsx';
import { localiseTex, stepTitle, stepWhy } from './text.ts';

export interface WalkThroughProps {
  trace: IterationTrace;
  rec: RecomputedTrace;
  whatIf: RecomputedTrace | null;
  row: number;
  t: number;
  step: number;
  onStep(i: number): void;
  update: number;
  onUpdate(i: number): void;
  scanAt: number;
  onScanAt(i: number): void;
}

/** A formula's substitution (its words in the page's language), or the reason it cannot be made, never an exception. */
function safeTex(f: () => string): string {
  try {
    return localiseTex(f());
  } catch (e) {
    return `\\text{${String((e as Error).message).replace(/[\\{}_%&#$^~]/g, ' ')}}`;
  }
}

export function WalkThrough({ trace, rec, whatIf, row, t, step, onStep, update, onUpdate, scanAt, onScanAt }: WalkThroughProps) {
  const { t: tr } = useTranslation('inspect');
  const s = FORMULA_STEPS[step];
  const title = stepTitle(s.id);
  const n = FORMULA_STEPS.length;
  const scan = useMemo(() => (s.id === 'advantages' ? gaeScanSteps(trace, row, rec) : null), [s.id, trace, row, rec]);
  const updateId = useId();
  // The update steps (epoch, minibatch) this response was in: the ratio and loss formulas read one.
  const updates = useMemo(() => rec.minibatches.flatMap((m) => (Array.from(m.rows).includes(row) ? [{ epoch: m.epoch, index: m.index }] : [])), [rec, row]);
  const ctx = { trace, rec, row, t, update };
  const withNumbers = safeTex(() => s.substitute(ctx));
  // Shown only where the what-if moves this step's numbers.
  const withWhatIf = whatIf ? safeTex(() => s.substitute({ ...ctx, rec: whatIf })) : null;
  return (
    <section className="walk" aria-labelledby="walk-title">
      <div className="walk-nav">
        <button type="button" className="btn small" disabled={step === 0} onClick={() => onStep(step - 1)}>
          {tr('walk.prev')}
        </button>
        <ol className="walk-steps" aria-label={tr('walk.steps')}>
          {FORMULA_STEPS.map((f, i) => (
            <li key={f.id}>
              <button type="button" className="walk-step" aria-current={i === step ? 'step' : undefined} onClick={() => onStep(i)}>
                <span className="walk-step-n">{i + 1}</span> {stepTitle(f.id)}
              </button>
            </li>
          ))}
        </ol>
        <button type="button" className="btn small" disabled={step === n - 1} onClick={() => onStep(step + 1)}>
          {tr('walk.next')}
        </button>
      </div>
      <div className="walk-body" aria-live="polite">
        <h4 id="walk-title">
          <span className="muted small">{tr('walk.stepOf', { step: step + 1, total: n })}</span> {title}
        </h4>
        <p>{stepWhy(s.id)}</p>
        <div className="walk-formula">
          <span className="muted small">{tr('walk.formula')}</span>
          <Formula tex={s.template(rec.knobs)} display label={tr('walk.formulaLabel', { step: title, what: tr('walk.formula') })} />
          <span className="muted small">{tr('walk.withNumbers', { t })}</span>
          <Formula tex={withNumbers} display label={tr('walk.formulaLabel', { step: title, what: tr('walk.withNumbers', { t }) })} />
          {withWhatIf !== null && withWhatIf !== withNumbers && (
            <div className="whatif-formula">
              <span className="whatif-tag small">{tr('walk.withWhatIf')}</span>
              <Formula tex={withWhatIf} display label={tr('walk.formulaLabel', { step: title, what: tr('walk.withWhatIf') })} />
            </div>
          )}
        </div>
        {updates.length > 1 && (
          <p className="walk-update small">
            <label htmlFor={updateId}>{tr('walk.update')}</label>{' '}
            <select id={updateId} value={update} onChange={(e) => onUpdate(Number(e.target.value))}>
              {updates.map((u, i) => (
                <option key={`${u.epoch}-${u.index}`} value={i}>
                  {tr('table.updateGroup', { epoch: u.epoch + 1, minibatch: u.index + 1 })}
                </option>
              ))}
            </select>
          </p>
        )}
        <p className="walk-refs small">
          <span>
            {tr('walk.verl')}:{' '}
            {s.verl.map((name, i) => (
              <span key={name}>
                {i > 0 && ', '}
                <code>{name}</code>
              </span>
            ))}
          </span>
          <span>
            {tr('walk.openrlhf')}:{' '}
            {s.openrlhf.map((name, i) => (
              <span key={name}>
                {i > 0 && ', '}
                <code>{name}</code>
              </span>
            ))}
          </span>
        </p>
      </div>
      {scan && <GaeScan steps={scan} gae={rec.knobs.advantageEstimator === 'gae'} gamma={rec.knobs.gamma} at={scanAt} onAt={onScanAt} />}
    </section>
  );
}
