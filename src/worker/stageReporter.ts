// The phase of the PPO iteration the worker is in, told to the page each time it changes (the
// pipeline diagram follows it).
import type { Post } from './hostDeps.ts';
import type { TrainerStage } from './protocol.ts';

export class StageReporter {
  private current: TrainerStage = 'idle';

  constructor(private readonly post: Post) {}

  get now(): TrainerStage {
    return this.current;
  }

  /** The stage in flight, for a report of what went wrong in it; undefined when idle. */
  get busy(): Exclude<TrainerStage, 'idle'> | undefined {
    return this.current === 'idle' ? undefined : this.current;
  }

  set(stage: TrainerStage): void {
    if (this.current === stage) return;
    this.current = stage;
    this.post({ type: 'stage', stage });
  }
}
