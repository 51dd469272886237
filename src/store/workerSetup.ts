// What a new trainer worker is told before any command: the inspector's capture switch when it is
// on, and the SFT models the page keeps (one per task), so a trainer it builds or a state it
// resumes is of the model the page shows.
import type { StoreApi } from 'zustand';
import type { InspectionState } from './inspection.ts';
import { useSft } from './sftState.ts';
import type { WorkerLike } from './trainerConnection.ts';

/** `w`, told the capture switch and the kept models. */
export function setUpWorker(w: WorkerLike, inspection: StoreApi<InspectionState>): WorkerLike {
  if (inspection.getState().capture) sendCapture(w, true);
  for (const m of Object.values(useSft.getState().models)) {
    const bytes = m.bytes.slice(0);
    try {
      w.postMessage({ type: 'loadCheckpoint', role: 'actor', bytes, task: m.task }, [bytes]);
    } catch {
      // A worker that cannot take a message is replaced, and gets the models then.
    }
  }
  return w;
}

/** The capture switch as no user command: a worker that cannot take it gets it when it is replaced. */
export function sendCapture(w: WorkerLike | null, on: boolean): void {
  try {
    w?.postMessage({ type: 'setCapture', on }, []);
  } catch {
    // postMessage of two plain fields does not fail; a dying worker is replaced, and told then
  }
}
