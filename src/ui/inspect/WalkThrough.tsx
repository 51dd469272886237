// "Walk through this iteration": the eight steps from rollout to the optimiser step, each with
// its formula in symbols and with this response's numbers at the selected token, why it is done,
// and the verl and OpenRLHF functions that do the same. The advantage step shows the reverse scan.
import { useId, useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import { FORMULA_STEPS, type FormulaStep, gaeScanSteps, type InspectKnobs, type IterationTrace, type RecomputedTrace, stepFunctions } from '../../rl/inspect/index.ts';
import { FittedFormula } from '../math/Formula.tsx';
import { GaeScan } from './GaeScan.tsx';
import { localiseTex, stepTitle, stepWhy } from './text.ts';

export interface WalkThroughProps {
  trace: IterationTrace;
  rec: RecomputedTrace;
  whatIf: RecomputedTrace | null;
  /** Each response token as text (B·A). */
  tokenText: readonly string[];
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

/** A step's functions in one framework: the one this run used first and marked, the other modes after it. */
function FunctionList({ step, knobs, framework }: { step: FormulaStep; knobs: InspectKnobs; framework: 'verl' | 'openrlhf' }) {
  const { t: tr } = useTranslation('inspect');
  const fns = stepFunctions(step, knobs, framework);
  const others = fns.some((f) => f.used) && fns.length > 1;
  return (
    <span className="walk-fns" data-framework={framework}>
      {tr(framework === 'verl' ? 'walk.verl' : 'walk.openrlhf')}:{' '}
      {fns.map((f, i) => (
        <span key={f.name} className={f.used ? 'walk-fn-used' : undefined}>
          {i === 1 && others ? <span className="muted"> {tr('walk.otherModes')} </span> : i > 0 ? ', ' : null}
          <code>{f.name}</code>
          {f.used && <strong className="used-mark"> {tr('walk.usedHere')}</strong>}
        </span>
      ))}
    </span>
  );
}

export function WalkThrough({ trace, rec, whatIf, tokenText, row, t, step, onStep, update, onUpdate, scanAt, onScanAt }: WalkThroughProps) {
  const { t: tr } = useTranslation('inspect');
  const s = FORMULA_STEPS[step];
  const title = stepTitle(s.id);
  const n = FORMULA_STEPS.length;
  const scan = useMemo(() => (s.id === 'advantages' ? gaeScanSteps(trace, row, rec) : null), [s.id, trace, row, rec]);
  const updateId = useId();
  // The update steps (epoch, minibatch) this response was in: the ratio and loss formulas read one.
  const updates = useMemo(() => rec.minibatches.flatMap((m) => (Array.from(m.rows).includes(row) ? [{ epoch: m.epoch, index: m.index }] : [])), [rec, row]);
  const ctx = { trace, rec, row, t, update, tokenText };
  const withNumbers = safeTex(() => s.substitute(ctx));
  // Shown only where the what-if moves this step's numbers.
  const withWhatIf = whatIf ? safeTex(() => s.substitute({ ...ctx, rec: whatIf })) : null;
  const template = s.template(rec.knobs);
  const whatIfTemplate = whatIf ? s.template(whatIf.knobs) : null;
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
          <FittedFormula tex={template} label={tr('walk.formulaLabel', { step: title, what: tr('walk.formula') })} />
          {whatIfTemplate !== null && whatIfTemplate !== template && (
            <div className="whatif-formula">
              <span className="whatif-tag small">{tr('walk.whatIfFormula')}</span>
              <FittedFormula tex={whatIfTemplate} label={tr('walk.formulaLabel', { step: title, what: tr('walk.whatIfFormula') })} />
            </div>
          )}
          <span className="muted small">{tr('walk.withNumbers', { t })}</span>
          <FittedFormula tex={withNumbers} label={tr('walk.formulaLabel', { step: title, what: tr('walk.withNumbers', { t }) })} />
          {withWhatIf !== null && withWhatIf !== withNumbers && (
            <div className="whatif-formula">
              <span className="whatif-tag small">{tr('walk.withWhatIf')}</span>
              <FittedFormula tex={withWhatIf} label={tr('walk.formulaLabel', { step: title, what: tr('walk.withWhatIf') })} />
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
          <FunctionList step={s} knobs={rec.knobs} framework="verl" />
          <FunctionList step={s} knobs={rec.knobs} framework="openrlhf" />
        </p>
      </div>
      {scan && <GaeScan steps={scan} gae={rec.knobs.advantageEstimator === 'gae'} gamma={rec.knobs.gamma} at={scanAt} onAt={onScanAt} />}
    </section>
  );
}
