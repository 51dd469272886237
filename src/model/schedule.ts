// Learning-rate schedule: linear warmup to the peak, then cosine decay to minRatio·peak.

export interface LrSchedule {
  peak: number;
  warmupSteps: number;
  totalSteps: number;
  /** Final lr as a fraction of the peak (0 decays to zero). */
  minRatio: number;
}

/** Learning rate for 0-based `step`. */
export function lrAt(step: number, s: LrSchedule): number {
  if (s.warmupSteps > 0 && step < s.warmupSteps) return (s.peak * (step + 1)) / s.warmupSteps;
  const decaySteps = s.totalSteps - s.warmupSteps;
  if (decaySteps <= 0) return s.peak;
  const progress = Math.min(1, Math.max(0, (step - s.warmupSteps) / decaySteps));
  const cosine = 0.5 * (1 + Math.cos(Math.PI * progress));
  return s.peak * (s.minRatio + (1 - s.minRatio) * cosine);
}
