// KL coefficient controllers (Ziegler et al. 2019, as in TRL / OpenRLHF / verl).
// fixed: β never changes. adaptive: e = clip(KL/target − 1, −0.2, 0.2); β ← β·(1 + e·n/horizon),
// with KL the batch's mean per-sequence KL (kl_seq) and n the number of sequences in the batch.

export interface KlController {
  readonly beta: number;
  /** Called once per iteration after the batch's KL is known. */
  update(currentKl: number, nSequences: number): void;
}

export class FixedKlController implements KlController {
  constructor(public beta: number) {}
  update(_currentKl?: number, _nSequences?: number): void {}
}

export class AdaptiveKlController implements KlController {
  constructor(
    public beta: number,
    readonly target: number,
    readonly horizon: number,
  ) {
    if (!(target > 0)) throw new Error(`adaptive KL controller: target must be > 0, got ${target}`);
    if (!(horizon > 0)) throw new Error(`adaptive KL controller: horizon must be > 0, got ${horizon}`);
  }

  update(currentKl: number, nSequences: number): void {
    // A NaN KL would poison β for the rest of the run; leave β alone instead.
    if (!Number.isFinite(currentKl)) return;
    const error = Math.min(0.2, Math.max(-0.2, currentKl / this.target - 1));
    this.beta *= 1 + (error * nSequences) / this.horizon;
  }
}

export function makeKlController(kind: 'fixed' | 'adaptive', initBeta: number, target: number, horizon: number): KlController {
  return kind === 'adaptive' ? new AdaptiveKlController(initBeta, target, horizon) : new FixedKlController(initBeta);
}
