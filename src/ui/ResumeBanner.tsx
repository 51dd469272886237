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

export function ResumeBanner() {
  const resume = useApp((s) => s.resume);
  const cpuOffer = useApp((s) => s.cpuOffer);
  if (!resume && !cpuOffer) return null;
  return (
    <>
      {resume ? (
        <div className="notice info" role="status" data-testid="resume-offer">
          <span>
            “{resume.runName}” {resume.wasRunning ? 'was training' : 'was paused'} when the page closed; its full trainer state was saved after iteration {resume.iter} ({ago(resume.savedAt)}).
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
