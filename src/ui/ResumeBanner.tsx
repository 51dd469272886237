// Offers that keep work: after a reload, resume the run whose trainer state was saved ("Resume from
// iteration k"); after a lost GPU device that did not come back, continue on the CPU backend.
import { useTranslation } from 'react-i18next';
import { formatDateTime, t } from '../i18n/index.ts';
import { useApp } from '../store/appStore.ts';
import { presetTitle, runArmsLabel } from '../store/notices.ts';
import { trainer } from '../store/trainerClient.ts';

/** As Date.toLocaleString writes it, in the page's language. */
const LONG_AGO: Intl.DateTimeFormatOptions = { year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' };

function ago(ms: number): string {
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
  if (s < 90) return t('notices:resume.secondsAgo', { s });
  const m = Math.round(s / 60);
  return m < 90 ? t('notices:resume.minutesAgo', { m }) : formatDateTime(ms, LONG_AGO);
}

/** After a reload: the "Run both" the page left unfinished, with the arm it goes on with. */
function SequenceBanner() {
  const { t } = useTranslation('notices');
  const offer = useApp((s) => s.sequenceOffer);
  const runs = useApp((s) => s.runs);
  if (!offer) return null;
  const { seq, done, resumable } = offer;
  const arm = seq.arms[seq.index];
  const finished = seq.arms.slice(0, seq.index).map((a) => t('resume.quoted', { name: a.label }));
  const partial =
    !resumable && seq.index < seq.arms.length && runs.some((r) => r.preset === seq.preset && r.name === arm.label && r.metrics.length > 0 && r.metrics.length < seq.budget);
  const where = { preset: presetTitle(seq.preset), runArms: runArmsLabel(seq.arms.length), arm: seq.index + 1, arms: seq.arms.length, label: arm.label };
  return (
    <div className="notice info" role="status" data-testid="sequence-offer">
      <span>
        {resumable ? t('resume.sequenceInterruptedSaved', { ...where, done, budget: seq.budget }) : t('resume.sequenceInterrupted', where)}
        {finished.length > 0 ? t('resume.finished', { count: finished.length, names: finished.join(t('resume.namesJoin')) }) : ''}
        {!resumable ? t(partial ? 'resume.retrainsPartial' : 'resume.retrains', { label: arm.label }) : ''}
      </span>
      <span className="buttons">
        <button type="button" className="btn primary small" onClick={() => void trainer.continueSequence()}>
          {resumable ? t('resume.resumeArm', { label: arm.label, iter: done }) : t('resume.trainArm', { label: arm.label })}
          {seq.index + 1 < seq.arms.length ? t('resume.thenRest') : ''}
        </button>
        <button type="button" className="btn ghost small" onClick={() => trainer.discardSequence()}>
          {t('resume.discard')}
        </button>
      </span>
    </div>
  );
}

export function ResumeBanner() {
  const { t } = useTranslation('notices');
  const resume = useApp((s) => s.resume);
  const cpuOffer = useApp((s) => s.cpuOffer);
  const sequenceOffer = useApp((s) => s.sequenceOffer);
  // The sequence's own banner resumes its arm (and goes on with the next); one offer, not two.
  const ownResume = resume && !(sequenceOffer?.resumable && sequenceOffer.seq.runId === resume.runId) ? resume : null;
  if (!ownResume && !cpuOffer && !sequenceOffer) return null;
  return (
    <>
      <SequenceBanner />
      {ownResume && resume ? (
        <div className="notice info" role="status" data-testid="resume-offer">
          <span>{t(resume.wasRunning ? 'resume.wasTraining' : 'resume.wasPaused', { run: resume.runName, iter: resume.iter, ago: ago(resume.savedAt) })}</span>
          <span className="buttons">
            <button type="button" className="btn primary small" onClick={() => void trainer.resume()}>
              {t('resume.resumeFrom', { iter: resume.iter })}
            </button>
            <button type="button" className="btn ghost small" onClick={() => void trainer.discardResume()}>
              {t('resume.discardState')}
            </button>
          </span>
        </div>
      ) : null}
      {cpuOffer ? (
        <div className="notice warn" role="alert" data-testid="cpu-offer">
          <span>{t('resume.cpuOffer', { message: cpuOffer.message })}</span>
          <button type="button" className="btn small" onClick={() => void trainer.continueOnCpu()}>
            {cpuOffer.iter !== null ? t('resume.cpuContinue', { iter: cpuOffer.iter }) : t('resume.cpuSwitch')}
          </button>
        </div>
      ) : null}
    </>
  );
}
