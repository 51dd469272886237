// The inspector of one PPO iteration: the trace the trainer captures, its float64 recomputation
// under the iteration's own or changed knobs, the token table and the formula walk-through.
export * from './trace.ts';
export * from './tokenTerms.ts';
export * from './recompute.ts';
export * from './table.ts';
export * from './formulas.ts';
export * from './hackedSample.ts';
export * from './clipped.ts';
export * from './experienceFields.ts';
export * from './questions.ts';
