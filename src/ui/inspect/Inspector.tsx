// The Inspect tab: one captured PPO iteration, one response at a time, as a token table, with a
// step-through of the formulas, a "what if" recomputation and the batch under the frameworks'
// names. Opening the tab turns capture on; a user's Pause captures the iteration in flight
// (RunLoop.pause), so a paused run has one to show. The clipped tokens are one click away: each
// response's count, "next clipped token", and the table showing only them.
import { type KeyboardEvent, Suspense, useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import {
  clipCountsByRow,
  clippedCells,
  defaultToken,
  FORMULA_STEPS,
  type InspectKnobs,
  nextClipped,
  type RecomputedTrace,
  recomputeTrace,
  tokenTable,
  whatIfDiff,
} from '../../rl/inspect/index.ts';
import { useApp } from '../../store/appStore.ts';
import { type CapturedTrace, type InspectFocus, useInspection } from '../../store/inspection.ts';
import { prefersReducedMotion } from './GaeScan.tsx';
import { ExperienceView } from './ExperienceView.tsx';
import { trainer } from '../../store/trainerClient.ts';
import { responseText, sameKnobs } from './format.ts';
import { ResponsePicker } from './ResponsePicker.tsx';
import { columnFrameworkNames, STEP_COLUMNS, type ColumnKey } from './steps.ts';
import { installInspectTestHook } from './testHook.ts';
import { TokenTable, GroupPanel } from './TokenTable.tsx';
import { WalkThrough } from './WalkThrough.tsx';
import { CheckYourself } from './CheckYourself.tsx';
import { WhatIf } from './WhatIf.tsx';
import { ownModelRunName } from './text.ts';
import './inspector.css';

installInspectTestHook();

const keyOf = (c: CapturedTrace) => `${c.runId}:${c.trace.iter}`;
const NO_HIGHLIGHT: ReadonlySet<ColumnKey> = new Set();

function EmptyState() {
  const { t: tr } = useTranslation('inspect');
  const running = useApp((s) => s.runState === 'running');
  return (
    <div className="inspect-empty">
      <p>
        <strong>{tr('empty.title')}</strong>
      </p>
      {running ? (
        <p role="status">{tr('empty.running')}</p>
      ) : (
        <>
          <p className="muted">{tr('empty.idle')}</p>
          <button type="button" className="btn primary" onClick={() => void trainer.step()}>
            {tr('empty.stepOnce')}
          </button>
        </>
      )}
    </div>
  );
}

/** The tab's words are fetched on first use: the inspector waits for them without blanking the other views. */
export function Inspector() {
  return (
    <Suspense fallback={<section className="inspector" aria-busy="true" />}>
      <InspectorBody />
    </Suspense>
  );
}

function InspectorBody() {
  const { t: tr } = useTranslation('inspect');
  const traces = useInspection((s) => s.traces);
  const setCapture = useInspection((s) => s.setCapture);
  const runs = useApp((s) => s.runs);
  useEffect(() => {
    setCapture(true);
    return () => setCapture(false);
  }, [setCapture]);
  const [chosen, setChosen] = useState<string | null>(null);
  const newest = traces[traces.length - 1] ?? null;
  // Holds the iteration on screen while training captures newer ones; takes the newest only when
  // none is chosen yet or the chosen one is no longer held.
  const held = traces.find((c) => keyOf(c) === chosen) ?? null;
  useEffect(() => {
    if (held === null && newest !== null) setChosen(keyOf(newest));
  }, [held, newest]);
  // A new run's first capture is shown at once: the picker follows the newest run, not an older run's iteration.
  const newestRun = newest?.runId ?? null;
  const seenRun = useRef(newestRun);
  useEffect(() => {
    if (newestRun !== null && newestRun !== seenRun.current && newest !== null) setChosen(keyOf(newest));
    seenRun.current = newestRun;
  }, [newestRun, newest]);
  const captured = held ?? newest;
  // "Inspect a hacked sample": show the asked-for iteration (TraceView then selects its response).
  const focus = useInspection((s) => s.focus);
  useEffect(() => {
    if (focus && traces.some((c) => keyOf(c) === `${focus.runId}:${focus.iter}`)) setChosen(`${focus.runId}:${focus.iter}`);
  }, [focus, traces]);
  const focusRow = focus && captured && keyOf(captured) === `${focus.runId}:${focus.iter}` ? focus : null;
  const runName = (c: CapturedTrace) => (c.file !== undefined || c.model !== undefined ? ownModelRunName(c) : (runs.find((r) => r.id === c.runId)?.name ?? c.runId));
  return (
    <section className="inspector" aria-label={tr('region')}>
      <h3 className="inspect-title">{tr('heading')}</h3>
      <p className="muted small">{tr('intro')}</p>
      <p className="muted small">{tr('capturing')}</p>
      {captured === null ? (
        <EmptyState />
      ) : (
        <>
          <div className="iter-picker">
            <label htmlFor="inspect-iteration">{tr('picker.iteration')}</label>
            <select id="inspect-iteration" value={keyOf(captured)} onChange={(e) => setChosen(e.target.value)}>
              {[...traces].reverse().map((c) => (
                <option key={keyOf(c)} value={keyOf(c)}>
                  {tr('picker.iterationOption', { run: runName(c), iter: c.trace.iter })}
                </option>
              ))}
            </select>
            {newest !== null && newest !== captured && (
              <button type="button" className="btn small" onClick={() => setChosen(keyOf(newest))}>
                {tr('picker.showNewest', { iter: newest.trace.iter })}
              </button>
            )}
          </div>
          <TraceView key={keyOf(captured)} captured={captured} focus={focusRow} />
        </>
      )}
    </section>
  );
}

function TraceView({ captured, focus }: { captured: CapturedTrace; focus: (InspectFocus & { n: number }) | null }) {
  const { t: tr } = useTranslation('inspect');
  const { trace, prompts, tokenText } = captured;
  const { A, B } = trace;
  const actual = useMemo((): RecomputedTrace | string => {
    try {
      return recomputeTrace(trace);
    } catch (e) {
      return (e as Error).message;
    }
  }, [trace]);
  const [row, setRow] = useState(0);
  const [t, setT] = useState(() => Math.max(0, defaultToken(trace, 0)));
  const [walking, setWalking] = useState(false);
  const [checking, setChecking] = useState(false);
  const [step, setStep] = useState(0);
  const [scanAt, setScanAt] = useState(0);
  const [update, setUpdate] = useState(0);
  const [knobs, setKnobs] = useState<InspectKnobs>(trace.knobs);
  const [resets, setResets] = useState(0);
  const [onlyClipped, setOnlyClipped] = useState(false);
  const [reveal, setReveal] = useState<{ t: number; step?: number; n: number } | null>(null);
  const startBtn = useRef<HTMLButtonElement>(null);
  const walkRegion = useRef<HTMLElement>(null);
  const whatIfActive = !sameKnobs(knobs, trace.knobs);
  const whatIf = useMemo((): RecomputedTrace | string | null => {
    if (!whatIfActive) return null;
    try {
      return recomputeTrace(trace, knobs);
    } catch (e) {
      return (e as Error).message;
    }
  }, [trace, knobs, whatIfActive]);
  const cells = useMemo(() => (typeof actual === 'string' ? [] : clippedCells(actual)), [actual]);
  const items = useMemo(() => {
    const counts = clipCountsByRow(cells, B);
    return Array.from({ length: B }, (_, b) => {
      let length = 0;
      for (let a = 0; a < A; a++) length += trace.actionMask[b * A + a] !== 0 ? 1 : 0;
      return { prompt: prompts[b] ?? '', response: responseText(tokenText, trace.actionMask, b, A), score: trace.scores[b], length, clipped: counts[b] };
    });
  }, [trace, prompts, tokenText, A, B, cells]);
  const names = useMemo(() => columnFrameworkNames(trace, trace.knobs.advantageEstimator === 'gae'), [trace]);
  const chooseRow = useCallback(
    (b: number, at?: number) => {
      setRow(b);
      setT(at ?? Math.max(0, defaultToken(trace, b)));
      setScanAt(0);
      setUpdate(0);
    },
    [trace],
  );
  /** Selects a token and scrolls the table to it (and to its clip badge in update step `step`). */
  const goToToken = useCallback(
    (b: number, at: number, stepIndex?: number) => {
      chooseRow(b, at);
      setReveal((r) => ({ t: at, step: stepIndex, n: (r?.n ?? 0) + 1 }));
    },
    [chooseRow],
  );
  // Each request (focus.n) selects its response (and token) once; the user's own choice holds after it.
  const focusRow = focus?.row;
  const focusT = focus?.t;
  const focusStep = focus?.step;
  const focusN = focus?.n;
  useEffect(() => {
    if (focusRow === undefined || focusN === undefined || focusRow >= B) return;
    if (focusT !== undefined && focusT < A) goToToken(focusRow, focusT, focusStep);
    else chooseRow(focusRow);
  }, [focusRow, focusT, focusStep, focusN, A, B, chooseRow, goToToken]);
  const next = (dir: 1 | -1) => {
    const n = nextClipped(cells, { row, t }, dir);
    if (n) goToToken(n.cell.row, n.cell.t, n.cell.step);
  };
  const goStep = useCallback((i: number) => {
    setStep(Math.max(0, Math.min(FORMULA_STEPS.length - 1, i)));
    setScanAt(0);
  }, []);
  if (typeof actual === 'string') return <p className="field-error">{tr('problem', { message: actual })}</p>;
  const rec = actual;
  const wRec = typeof whatIf === 'object' ? whatIf : null;
  const table = tokenTable(trace, row, rec);
  const wTable = wRec ? tokenTable(trace, row, wRec) : null;
  const diff = whatIfDiff(rec, wRec ?? rec);
  const stepId = FORMULA_STEPS[step].id;
  const highlight = walking ? new Set(STEP_COLUMNS[stepId]) : NO_HIGHLIGHT;
  const scanSteps = walking && stepId === 'advantages';
  const scanT = scanSteps ? A - 1 - Math.min(scanAt, A - 1) : null;
  const onKey = (e: KeyboardEvent) => {
    if (!walking) return;
    const el = e.target as HTMLElement;
    if (el.closest('input, select, textarea')) return;
    if (e.key === 'ArrowRight') goStep(step + 1);
    else if (e.key === 'ArrowLeft') goStep(step - 1);
    else if (e.key === 'Escape') {
      setWalking(false);
      startBtn.current?.focus();
    } else return;
    e.preventDefault();
  };
  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: ← / → and Esc of the walk-through, from any control inside
    <div className="inspect-body" onKeyDown={onKey}>
      <ResponsePicker
        items={items}
        row={row}
        onRow={chooseRow}
        actions={
          <div className="btn-row clip-nav">
            <button type="button" className="btn small" disabled={cells.length === 0} onClick={() => next(-1)}>
              {tr('picker.prevClipped')}
            </button>
            <button type="button" className="btn small" disabled={cells.length === 0} onClick={() => next(1)} data-testid="next-clipped">
              {tr('picker.nextClipped')}
            </button>
            <label className="inline-check small">
              <input type="checkbox" checked={onlyClipped} onChange={(e) => setOnlyClipped(e.target.checked)} /> {tr('table.onlyClipped')}
            </label>
          </div>
        }
      />
      <div className="inspect-actions">
        <button
          ref={startBtn}
          type="button"
          className={`btn${walking ? '' : ' primary'}`}
          aria-expanded={walking}
          onClick={() => {
            const on = !walking;
            setWalking(on);
            // Opened below the fold it would go unseen: it comes to the top of the window, focused.
            if (on)
              requestAnimationFrame(() => {
                walkRegion.current?.focus({ preventScroll: true });
                walkRegion.current?.scrollIntoView?.({ block: 'start', behavior: prefersReducedMotion() ? 'auto' : 'smooth' });
              });
          }}
        >
          {walking ? tr('walk.stop') : tr('walk.start')}
        </button>
        <button type="button" className="btn" aria-expanded={checking} aria-controls="check-yourself" onClick={() => setChecking(!checking)} data-testid="check-toggle">
          {checking ? tr('check.close') : tr('check.open')}
        </button>
        {walking && <span className="muted small">{tr('walk.keys')}</span>}
      </div>
      {checking && (
        <div id="check-yourself">
          <CheckYourself runId={captured.runId} trace={trace} rec={rec} tokenText={tokenText} />
        </div>
      )}
      {walking && (
        <section ref={walkRegion} tabIndex={-1} className="walk-region" aria-label={tr('walk.region')}>
          <WalkThrough
            trace={trace}
            rec={rec}
            whatIf={wRec}
            tokenText={tokenText}
            row={row}
            t={t}
            step={step}
            onStep={goStep}
            update={update}
            onUpdate={setUpdate}
            scanAt={scanAt}
            onScanAt={setScanAt}
          />
        </section>
      )}
      {table.group && <GroupPanel group={table.group} row={row} baseline={table.baseline} />}
      {wTable && <p className="whatif-tag">{tr('whatIf.bannerWithLegend')}</p>}
      <TokenTable
        table={table}
        whatIf={wTable}
        rec={rec}
        tokenText={(p) => tokenText[row * A + p] ?? ''}
        selected={scanT ?? t}
        onSelect={setT}
        highlight={highlight}
        scanAt={scanT}
        onlyClipped={onlyClipped}
        reveal={reveal}
        names={names}
      />
      <p className="muted small">{tr('table.scrollHint')}</p>
      <ExperienceView trace={trace} row={row} />
      <WhatIf
        key={resets}
        knobs={knobs}
        onChange={setKnobs}
        onReset={() => {
          setKnobs(trace.knobs);
          setResets((n) => n + 1);
        }}
        diff={diff}
        active={whatIfActive}
        error={typeof whatIf === 'string' ? whatIf : null}
      />
    </div>
  );
}
