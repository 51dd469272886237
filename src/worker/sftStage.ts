// The "1 · SFT" stage in the worker: trains a fresh actor of the asked size through the task's
// recipe with the same function as `npm run pretrain` (src/rl/sftRun.ts), streams its progress
// and phase evaluations, and can be cancelled between steps. What becomes of the model (the actor
// of the next trainer) is the host's job.
import type { Backend } from '../backend/backend.ts';
import type { PpoConfig } from '../rl/config.ts';
import { runSft, SftCancelled, timeSftSteps, type ModelDims, type SftMeta } from '../rl/sftRun.ts';
import { getTask } from '../tasks/index.ts';
import type { Post } from './hostDeps.ts';

export class SftStage {
  private cancelWanted = false;
  private running = false;

  constructor(private readonly post: Post) {}

  get busy(): boolean {
    return this.running;
  }

  /** Takes effect before the run's next step. */
  cancel(): void {
    if (this.running) this.cancelWanted = true;
  }

  /** Trains; null when cancelled (then `sftDone` with `cancelled` is already posted). */
  async train(be: Backend, config: PpoConfig, requestId: number, dims: ModelDims, phaseSteps?: number): Promise<{ bytes: Uint8Array; meta: SftMeta; seconds: number } | null> {
    const t0 = performance.now();
    const seconds = () => (performance.now() - t0) / 1000;
    const phases = getTask(config.task).sftRecipe.length;
    this.cancelWanted = false;
    this.running = true;
    try {
      const made = await runSft(
        be,
        { task: config.task, dims, seed: config.seed, ...(phaseSteps === undefined ? {} : { phaseSteps }) },
        {
          shouldStop: () => this.cancelWanted,
          onProgress: (p) =>
            this.post({ type: 'sftProgress', requestId, phase: p.phase, phases, doneSteps: p.doneSteps, totalSteps: p.totalSteps, loss: p.loss, seconds: seconds() }),
          onPhaseEnd: (e) => this.post({ type: 'sftPhaseEval', requestId, phase: e.phase, label: e.label, metrics: e.metrics }),
        },
      );
      return { ...made, seconds: seconds() };
    } catch (e) {
      if (!(e instanceof SftCancelled)) throw e;
      this.post({ type: 'sftDone', requestId, cancelled: true, seconds: seconds() });
      return null;
    } finally {
      this.running = false;
      this.cancelWanted = false;
    }
  }

  /**
   * Seconds per step at `dims` for the current task: one warm-up step (pipelines, buffers), one
   * timed. Two steps, not more: the command holds the worker's queue while it runs.
   */
  async time(be: Backend, config: PpoConfig, requestId: number, dims: ModelDims): Promise<void> {
    const secondsPerStep = await timeSftSteps(be, { task: config.task, dims, seed: config.seed }, 1, 1);
    const recipeSteps = getTask(config.task).sftRecipe.reduce((n, p) => n + p.steps, 0);
    this.post({ type: 'sftTimed', requestId, dims, secondsPerStep, recipeSteps });
  }
}
