// Offers that keep work: after a reload, resume the run whose trainer state was saved ("Resume from
// iteration k"); after a lost GPU device that did not come back, continue on the CPU backend.
import { useApp } from '../store/appStore.ts';
import { trainer } from '../store/trainerClient.ts';

function ago(ms: number): string {
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
  if (s < 90) return `${s} s ago`;
  const m = Math.round(s / 60);
  return m < 90 ? `${m} min ago` : new Date(ms).toLocaleString();
}

/** After a reload: the "Run both" the page left unfinished, with the arm it goes on with. */
function SequenceBanner() {
  const offer = useApp((s) => s.sequenceOffer);
  const runs = useApp((s) => s.runs);
  if (!offer) return null;
  const { seq, done, resumable } = offer;
  const arm = seq.arms[seq.index];
  const finished = seq.arms.slice(0, seq.index).map((a) => `“${a.label}”`);
  const partial =
    !resumable && seq.index < seq.arms.length && runs.some((r) => r.preset === seq.preset && r.name === arm.label && r.metrics.length > 0 && r.metrics.length < seq.budget);
  return (
    <div className="notice info" role="status" data-testid="sequence-offer">
      <span>
        “{seq.preset}” (Run both) was interrupted by the reload at arm {seq.index + 1} of {seq.arms.length}, “{arm.label}”
        {resumable ? `, saved after iteration ${done} of ${seq.budget}` : ''}.
        {finished.length > 0 ? ` ${finished.join(' and ')} ${finished.length === 1 ? 'is' : 'are'} finished.` : ''}
        {!resumable ? ` No trainer state of “${arm.label}” was kept, so it trains again from the start${partial ? ' (its partial run stays in the list)' : ''}.` : ''}
      </span>
      <span className="buttons">
        <button type="button" className="btn primary small" onClick={() => void trainer.continueSequence()}>
          {resumable ? `Resume “${arm.label}” from iteration ${done}` : `Train “${arm.label}”`}
          {seq.index + 1 < seq.arms.length ? ', then the rest' : ''}
        </button>
        <button type="button" className="btn ghost small" onClick={() => trainer.discardSequence()}>
          Discard
        </button>
      </span>
    </div>
  );
}

export function ResumeBanner() {
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
          <span>
            “{resume.runName}” {resume.wasRunning ? 'was training' : 'was paused'} when the page closed; its full trainer state was saved after iteration {resume.iter} (
            {ago(resume.savedAt)}).
          </span>
          <span className="buttons">
            <button type="button" className="btn primary small" onClick={() => void trainer.resume()}>
              Resume from iteration {resume.iter}
            </button>
            <button type="button" className="btn ghost small" onClick={() => void trainer.discardResume()}>
              Discard saved state
            </button>
          </span>
        </div>
      ) : null}
      {cpuOffer ? (
        <div className="notice warn" role="alert" data-testid="cpu-offer">
          <span>No WebGPU device came back after the loss ({cpuOffer.message}). The CPU reference backend computes the same maths, slowly.</span>
          <button type="button" className="btn small" onClick={() => void trainer.continueOnCpu()}>
            {cpuOffer.iter !== null ? `Continue on the CPU backend from iteration ${cpuOffer.iter}` : 'Switch to the CPU backend'}
          </button>
        </div>
      ) : null}
    </>
  );
}
