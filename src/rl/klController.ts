// KL coefficient controllers (Ziegler et al. 2019, as in TRL / OpenRLHF / verl).
// fixed: β never changes. adaptive: e = clip(KL/target − 1, −0.2, 0.2); β ← β·(1 + e·n/horizon),
// with n the number of sequences in the batch and KL measured on verl's scale (metric
// `kl_token_mean`): the mean over sequences of each sequence's token-mean KL, as verl's
// apply_kl_penalty feeds AdaptiveKLController (so verl's default target_kl 0.1 is per token).
//
// What β drives (klCoefsApplied): the reward penalty when the KL is in the reward (verl, OpenRLHF);
// when the KL is only in the loss, the KL-loss coefficient, as OpenRLHF does
// (loss = actor_loss + kl_loss · kl_ctl.value); verl keeps that coefficient fixed.
import type { PpoConfig } from './config.ts';

export interface KlController {
  beta: number;
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

type KlFields = Pick<PpoConfig, 'klController' | 'klCoef' | 'klLossCoef' | 'klTarget' | 'klHorizon' | 'klInReward' | 'useKlLoss'>;

/** True when the controller's β is the KL-loss coefficient (adaptive, KL only in the loss). */
export function controlsKlLoss(c: KlFields): boolean {
  return c.klController === 'adaptive' && !c.klInReward && c.useKlLoss;
}

/** The controller of a config: it starts from the coefficient it drives. */
export function klControllerFor(c: KlFields): KlController {
  return makeKlController(c.klController, controlsKlLoss(c) ? c.klLossCoef : c.klCoef, c.klTarget, c.klHorizon);
}

/** The coefficients an iteration actually applies: 0 for a KL term that is switched off. */
export function klCoefsApplied(c: KlFields, ctl: KlController): { rewardBeta: number; lossCoef: number } {
  return {
    rewardBeta: c.klInReward ? ctl.beta : 0,
    lossCoef: !c.useKlLoss ? 0 : controlsKlLoss(c) ? ctl.beta : c.klLossCoef,
  };
}

/** verl's controller input: mean over sequences of each sequence's token-mean of mask·KL_t. */
export function klTokenMean(kl: ArrayLike<number>, mask: ArrayLike<number>, B: number, A: number): number {
  if (B === 0) return 0;
  let total = 0;
  for (let b = 0; b < B; b++) {
    let s = 0;
    let n = 0;
    for (let a = 0; a < A; a++) {
      const k = b * A + a;
      if (mask[k] !== 0) {
        s += kl[k];
        n++;
      }
    }
    total += n > 0 ? s / n : 0; // a row without action tokens counts 0, as verl's masked_mean
  }
  return total / B;
}
