// Start / Pause / Step / Reset, the pipeline diagram, and the keyboard shortcuts.
import { useEffect } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import { useApp } from '../store/appStore.ts';
import { useSft } from '../store/sftState.ts';
import { trainer } from '../store/trainerClient.ts';
import { startBlockedBy } from '../store/rewardFunctionSync.ts';
import type { TrainerStage } from '../worker/protocol.ts';
import { ModelSizeNotice } from './ModelSizeNotice.tsx';
import { TrainingProgress } from './TrainingProgress.tsx';
import { TakeOver } from './TabOwner.tsx';

/** The pipeline's stages, in order; each is named and described by common:controls.stage.<stage>. */
const STAGES: Exclude<TrainerStage, 'idle'>[] = ['rollout', 'experience', 'update'];

/** True when a key press belongs to a text field, select or editable element, not the page. */
function isTyping(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable) return true;
  const tag = target.tagName;
  if (tag === 'TEXTAREA' || tag === 'SELECT') return true;
  if (tag === 'INPUT') {
    const type = (target as HTMLInputElement).type;
    return !['checkbox', 'radio', 'button', 'submit', 'range', 'color'].includes(type);
  }
  return false;
}

const SPACE_ROLES = new Set(['button', 'switch', 'checkbox', 'radio', 'tab', 'slider', 'option', 'menuitem', 'link']);

/** True when Space has its own meaning for the focused element (a native or ARIA control). */
export function ownsSpace(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target instanceof HTMLButtonElement || target instanceof HTMLInputElement || target instanceof HTMLAnchorElement) return true;
  if (target.tagName === 'SUMMARY') return true;
  return SPACE_ROLES.has(target.getAttribute('role') ?? '');
}

export function useShortcuts(): void {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey || isTyping(e.target)) return;
      // Space on a focused control already acts on it (clicks a button, ticks a checkbox, opens a
      // disclosure); starting or pausing the run as well would double-fire.
      if (e.key === ' ' && ownsSpace(e.target)) return;
      // While SFT makes the model, Start and Step wait for it, as their buttons say.
      const sftBusy = useSft.getState().run?.status === 'running';
      if (e.key === ' ') {
        e.preventDefault();
        if (sftBusy && useApp.getState().runState !== 'running') return;
        void trainer.toggle();
      } else if (e.key === 's' || e.key === 'S') {
        if (!sftBusy) void trainer.step();
      } else if (e.key === 'r' || e.key === 'R') {
        void trainer.reset();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);
}

export function Pipeline() {
  const { t } = useTranslation('common');
  const stage = useApp((s) => s.stage);
  return (
    <ol className="pipeline" aria-label={t('controls.pipeline')} data-stage={stage}>
      {STAGES.map((s, i) => (
        <li key={s} className={`stage${stage === s ? ' active' : ''}`} aria-current={stage === s ? 'step' : undefined} data-testid={`stage-${s}`}>
          <span className="stage-title">{t(`controls.stage.${s}.title`)}</span>
          <span className="stage-what">{t(`controls.stage.${s}.what`)}</span>
          {i < STAGES.length - 1 ? (
            <span className="arrow" aria-hidden="true">
              →
            </span>
          ) : null}
        </li>
      ))}
    </ol>
  );
}

export function Controls() {
  const { t } = useTranslation('common');
  const runState = useApp((s) => s.runState);
  const notice = useApp((s) => s.notice);
  const setNotice = useApp((s) => s.setNotice);
  const trainerLabel = useApp((s) => s.trainerLabel);
  const backend = useApp((s) => s.backend);
  // A reward function awaiting the visitor's answer, or refused on its check, holds Start: say why.
  const blocked = useApp(startBlockedBy);
  const readOnlyTab = useApp((s) => s.readOnlyTab);
  const sftRunning = useSft((s) => s.run?.status === 'running');
  const held = sftRunning ? t('controls.sftHolds') : blocked;
  useShortcuts();
  return (
    <section className="controls card" aria-label={t('controls.label')}>
      <div className="control-row">
        <div className="buttons">
          <button
            type="button"
            className="btn primary"
            onClick={() => void trainer.start()}
            disabled={runState === 'running' || held !== null}
            title={held ?? t('controls.startHint')}
          >
            <span aria-hidden="true">▶ </span>
            {t('controls.start')}
          </button>
          <button type="button" className="btn" onClick={() => void trainer.pause({ captureInFlight: true })} disabled={runState !== 'running'} title={t('controls.pauseHint')}>
            <span aria-hidden="true">❚❚ </span>
            {t('controls.pause')}
          </button>
          <button type="button" className="btn" onClick={() => void trainer.step()} disabled={runState === 'running' || held !== null} title={held ?? t('controls.stepHint')}>
            <span aria-hidden="true">» </span>
            {t('controls.step')}
          </button>
          <button type="button" className="btn" onClick={() => void trainer.reset()} title={t('controls.resetHint')}>
            <span aria-hidden="true">↺ </span>
            {t('controls.reset')}
          </button>
        </div>
        <Pipeline />
      </div>
      <div className="control-meta">
        <span className={`run-state ${runState}`} data-testid="run-state">
          {t(`controls.state.${runState === 'running' ? 'running' : runState === 'paused' ? 'paused' : 'idle'}`)}
        </span>
        <TrainingProgress />
        {/* The worker's label names the adapter as the adapter names itself. */}
        <span className="muted small" translate={trainerLabel ? 'no' : undefined} data-testid="trainer-backend">
          {trainerLabel ?? (backend === 'cpu' ? t('controls.cpuBackend') : t('controls.webgpuBackend'))}
        </span>
        <span className="muted small kbd-hint">
          <Trans t={t} i18nKey="controls.shortcuts" components={{ kbd: <kbd /> }} />
        </span>
      </div>
      {blocked ? (
        <p className="notice warn" role="status" data-testid="start-blocked">
          {blocked}
          {readOnlyTab ? <TakeOver /> : null}
        </p>
      ) : null}
      <ModelSizeNotice />
      {notice ? (
        // Other tones are read out by the page's live region (a11y/Announcer.tsx) with the state change that came with them.
        <div className={`notice ${notice.tone}`} role={notice.tone === 'error' ? 'alert' : undefined} data-testid="notice">
          <span>{notice.text}</span>
          <button type="button" className="btn ghost small" aria-label={t('controls.dismiss')} onClick={() => setNotice(null)}>
            ×
          </button>
        </div>
      ) : null}
    </section>
  );
}
