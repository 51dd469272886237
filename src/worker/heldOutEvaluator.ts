// Held-out evaluation of the trainer's weights on the schedule of evalSchedule.ts: the SFT model
// before the first iteration (iteration 0), after every `evalEvery` completed iterations and at the
// end of a budget, at most once per iteration count; evalEvery = 0 turns all of them off. The
// baseline can be made ahead, before Start (`prepare`); the first iteration then posts it instead
// of evaluating again.
import type { PpoConfig } from '../rl/config.ts';
import { evalDue, evalSize } from './evalSchedule.ts';
import type { Post, TrainerLike } from './hostDeps.ts';

interface Evaluation {
  values: Record<string, number>;
  prompts: number;
  seconds: number;
}

export class HeldOutEvaluator {
  /** Which trainer the evaluations belong to, and the iteration count last evaluated. */
  private evaluated: { trainer: TrainerLike; iter: number } | null = null;
  /** The baseline made ahead for this trainer and config (`key`). */
  private prepared: (Evaluation & { trainer: TrainerLike; key: string }) | null = null;

  constructor(
    private readonly post: Post,
    private readonly config: () => PpoConfig,
    /** Whether the device went away (an evaluation it interrupted posts nothing). */
    private readonly lost: () => boolean,
  ) {}

  /** Evaluates and posts if due now; `atBudgetEnd` makes it due. */
  async ifDue(trainer: TrainerLike, atBudgetEnd = false): Promise<void> {
    const config = this.config();
    if (this.lost() || config.evalEvery <= 0) return;
    const done = trainer.iter;
    if (!atBudgetEnd && !evalDue(done, config.evalEvery)) return;
    if (this.evaluated?.trainer === trainer && this.evaluated.iter === done) return;
    this.evaluated = { trainer, iter: done };
    const ready = this.prepared;
    this.prepared = null;
    const result = done === 0 && ready?.trainer === trainer && ready.key === JSON.stringify(config) ? ready : await this.run(trainer, config);
    if (this.lost()) return;
    this.post({ type: 'eval', iter: done, values: result.values, prompts: result.prompts, seconds: result.seconds });
  }

  /**
   * The baseline of an unused trainer, made ahead and kept for its first iteration; whether one was
   * made now. `stillWanted` says, once it is done, whether it still belongs to the current trainer.
   */
  async prepare(trainer: TrainerLike, stillWanted: () => boolean): Promise<boolean> {
    const config = this.config();
    if (trainer.iter !== 0 || config.evalEvery <= 0) return false;
    const key = JSON.stringify(config);
    if (this.prepared?.trainer === trainer && this.prepared.key === key) return false;
    const result = await this.run(trainer, config);
    if (this.lost() || !stillWanted()) return false;
    this.prepared = { ...result, trainer, key };
    return true;
  }

  /** Forgets what was evaluated and made ahead: the trainer, or its state, is another. */
  forget(): void {
    this.evaluated = null;
    this.prepared = null;
  }

  private async run(trainer: TrainerLike, config: PpoConfig): Promise<Evaluation> {
    const { count, samplesPerPrompt } = evalSize(config);
    const t0 = performance.now();
    const values = await trainer.evaluate(count, samplesPerPrompt);
    return { values, prompts: count, seconds: (performance.now() - t0) / 1000 };
  }
}
