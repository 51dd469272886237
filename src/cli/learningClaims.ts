// What `npm run learning` measures for each preset and how it decides whether the preset's claim
// holds. Pure functions over recorded runs (no training here), so every checker can be shown to
// fail on a synthetic stream that violates it (tests/cli/cli_learning.test.ts).
import type { RunRecord } from './presetRun.ts';

export interface ArmRuns {
  label: string;
  /** One record per seed, in seed order (paired arms share their seeds). */
  runs: RunRecord[];
}

/** The headline metric of a preset: a held-out evaluation value or a training metric. */
export interface MetricSpec {
  name: string;
  source: 'eval' | 'train';
}

/** ok: true/false; null when a metric the claim needs was never logged. */
export interface ClaimResult {
  ok: boolean | null;
  reason: string;
}

export interface ClaimSpec {
  metric: MetricSpec;
  /** One line: the claim in words, as printed under the table. */
  text: string;
  /** 'generic' for presets without a claim of their own. */
  kind: 'specific' | 'generic';
  check(arms: ArmRuns[], ctx: { klTarget: number }): ClaimResult;
}

// ---------------------------------------------------------------------------------------------
// Series helpers

export const mean = (xs: number[]): number => (xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : NaN);

/** Sample standard deviation (0 for fewer than 2 values). */
export function sd(xs: number[]): number {
  if (xs.length < 2) return 0;
  const m = mean(xs);
  return Math.sqrt(xs.reduce((s, x) => s + (x - m) ** 2, 0) / (xs.length - 1));
}

/** A training metric's per-iteration values; undefined when any iteration lacks it. */
export function trainSeries(run: RunRecord, name: string): number[] | undefined {
  if (run.metrics.length === 0 || run.metrics.some((m) => typeof m[name] !== 'number')) return undefined;
  return run.metrics.map((m) => m[name]);
}

/** Mean of the first `n` values. */
export const head = (xs: number[], n: number): number => mean(xs.slice(0, n));
/** Mean of the last `n` values. */
export const tail = (xs: number[], n: number): number => mean(xs.slice(-n));

/** Iterations a training metric is averaged over for its start and final values in the table. */
export const TRAIN_START_ITERS = 5;
export const TRAIN_FINAL_ITERS = 10;

/** SFT (start) and final value of a metric in one run; undefined when not logged. */
export function startFinal(run: RunRecord, metric: MetricSpec): { start: number; final: number } | undefined {
  if (metric.source === 'eval') {
    const last = run.evals.at(-1);
    if (typeof run.evalBefore[metric.name] !== 'number' || !last || typeof last.values[metric.name] !== 'number') return undefined;
    return { start: run.evalBefore[metric.name], final: last.values[metric.name] };
  }
  const xs = trainSeries(run, metric.name);
  return xs ? { start: head(xs, TRAIN_START_ITERS), final: tail(xs, TRAIN_FINAL_ITERS) } : undefined;
}

/**
 * Iterations until the seed-mean curve first covers half of its start → final gain (held-out
 * evaluations for eval metrics; a trailing 5-iteration mean for training metrics). null when the
 * metric does not rise or is missing.
 */
export function itersToHalfGain(runs: RunRecord[], metric: MetricSpec): number | null {
  const sf = runs.map((r) => startFinal(r, metric));
  if (sf.some((x) => !x) || runs.length === 0) return null;
  const start = mean(sf.map((x) => x!.start));
  const final = mean(sf.map((x) => x!.final));
  if (!(final > start)) return null;
  const half = start + (final - start) / 2;
  if (metric.source === 'eval') {
    const iters = runs[0].evals.map((e) => e.iter);
    for (let k = 0; k < iters.length; k++) {
      const v = mean(runs.map((r) => r.evals[k]?.values[metric.name] ?? NaN));
      if (v >= half) return iters[k];
    }
    return null;
  }
  const series = runs.map((r) => trainSeries(r, metric.name)!);
  const n = Math.min(...series.map((s) => s.length));
  for (let i = 0; i < n; i++) {
    const lo = Math.max(0, i - 4);
    const v = mean(series.map((s) => mean(s.slice(lo, i + 1))));
    if (v >= half) return i + 1;
  }
  return null;
}

const pts = (x: number) => `${(100 * x).toFixed(1)} pts`;
const f2 = (x: number) => x.toFixed(2);
const f3 = (x: number) => x.toFixed(3);

function evalGain(runs: RunRecord[], name: string): { gains: number[]; ok: boolean } {
  const gains: number[] = [];
  for (const r of runs) {
    const sf = startFinal(r, { name, source: 'eval' });
    if (!sf) return { gains, ok: false };
    gains.push(sf.final - sf.start);
  }
  return { gains, ok: runs.length > 0 };
}

function missing(what: string): ClaimResult {
  return { ok: null, reason: `metric missing: ${what}` };
}

function combine(parts: { ok: boolean; why: string }[]): ClaimResult {
  const bad = parts.filter((p) => !p.ok);
  return bad.length === 0 ? { ok: true, reason: parts.map((p) => p.why).join('; ') } : { ok: false, reason: bad.map((p) => p.why).join('; ') };
}

// ---------------------------------------------------------------------------------------------
// Checkers

/** Held-out sampled accuracy +minSampled, greedy +minGreedy (seed means); reward last 20 ≥ ratio × first 10. */
/**
 * Learn arithmetic: sampled/greedy held-out accuracy gains, a visibly rising reward, and no shortcut:
 * greedy accuracy on neither carry nor no-carry problems may fall by more than `maxSplitDrop` (a
 * policy that learned "always carry" raises carry accuracy by giving up the no-carry problems).
 */
export function checkLearnArithmetic(arms: ArmRuns[], minSampled = 0.25, minGreedy = 0.15, ratio = 2, maxSplitDrop = 0.1): ClaimResult {
  const runs = arms[0]?.runs ?? [];
  const sampled = evalGain(runs, 'accuracy');
  const greedy = evalGain(runs, 'greedy_accuracy');
  const carry = evalGain(runs, 'greedy_accuracy_carry');
  const noCarry = evalGain(runs, 'greedy_accuracy_no_carry');
  const rewards = runs.map((r) => trainSeries(r, 'reward_mean'));
  if (!sampled.ok) return missing('held-out accuracy');
  if (!greedy.ok) return missing('held-out greedy_accuracy');
  if (!carry.ok) return missing('held-out greedy_accuracy_carry');
  if (!noCarry.ok) return missing('held-out greedy_accuracy_no_carry');
  if (rewards.some((x) => !x)) return missing('reward_mean');
  const first = mean(rewards.map((x) => head(x!, 10)));
  const last = mean(rewards.map((x) => tail(x!, 20)));
  const split = (name: string, gains: number[]) => {
    const drop = -mean(gains);
    return {
      ok: drop <= maxSplitDrop,
      why: `greedy accuracy on ${name} problems ${drop > 0 ? '−' : '+'}${pts(Math.abs(drop))} (may fall by at most ${pts(maxSplitDrop)}: no "always/never carry" shortcut)`,
    };
  };
  return combine([
    { ok: mean(sampled.gains) >= minSampled, why: `sampled accuracy ${mean(sampled.gains) >= 0 ? '+' : ''}${pts(mean(sampled.gains))} (need +${pts(minSampled)})` },
    { ok: mean(greedy.gains) >= minGreedy, why: `greedy ${mean(greedy.gains) >= 0 ? '+' : ''}${pts(mean(greedy.gains))} (need +${pts(minGreedy)})` },
    { ok: last >= ratio * first, why: `reward last 20 / first 10 = ${f2(last / first)} (need ≥ ${ratio})` },
    split('carry', carry.gains),
    split('no-carry', noCarry.gains),
  ]);
}

/** β = 0 (arm 0) vs β > 0 (arm 1): both raise reward; KL ratio ≥ 5; fluency drops at β = 0 only. */
export function checkRewardHacking(arms: ArmRuns[]): ClaimResult {
  if (arms.length < 2) return missing('two arms (β = 0 and β > 0)');
  const summary = (a: ArmRuns) => {
    const reward = a.runs.map((r) => trainSeries(r, 'reward_mean'));
    const kl = a.runs.map((r) => trainSeries(r, 'kl_seq'));
    const flu = a.runs.map((r) => trainSeries(r, 'fluency'));
    if ([...reward, ...kl, ...flu].some((x) => !x) || a.runs.length === 0) return undefined;
    // Before = the first two batches (iteration 0 samples the SFT policy itself); after = the last four.
    return {
      rewardGain: mean(reward.map((x) => tail(x!, 4) - head(x!, 2))),
      kl: mean(kl.map((x) => tail(x!, 4))),
      fluBefore: mean(flu.map((x) => head(x!, 2))),
      fluAfter: mean(flu.map((x) => tail(x!, 4))),
    };
  };
  const free = summary(arms[0]);
  const tied = summary(arms[1]);
  if (!free || !tied) return missing('reward_mean, kl_seq or fluency');
  return combine([
    { ok: free.rewardGain > 0.5 && tied.rewardGain > 0.5, why: `reward gain ${f2(free.rewardGain)} / ${f2(tied.rewardGain)} (need > 0.5 both)` },
    { ok: free.kl >= 5 * tied.kl, why: `KL ${arms[0].label} ${f2(free.kl)} vs ${arms[1].label} ${f2(tied.kl)} (×${f2(free.kl / tied.kl)}, need ≥ 5)` },
    {
      ok: free.fluAfter < free.fluBefore - 1.5 && free.fluAfter < tied.fluAfter - 1,
      why: `fluency ${arms[0].label} ${f2(free.fluBefore)} → ${f2(free.fluAfter)}, ${arms[1].label} → ${f2(tied.fluAfter)} (need a drop > 1.5 nats at ${arms[0].label} and ${arms[0].label} > 1 nat below ${arms[1].label})`,
    },
  ]);
}

/**
 * "Write your own reward": PPO games the naive function. Its score rises (> 1 from the first two
 * batches to the last five), the reference's log-probability per token of the text falls by more
 * than 1 nat, and held-out distinct-2 falls by more than 0.15: the samples become repeats of the
 * paid word, not better sentences.
 */
export function checkOwnReward(arms: ArmRuns[]): ClaimResult {
  const runs = arms[0]?.runs ?? [];
  const reward = runs.map((r) => trainSeries(r, 'reward_mean'));
  const flu = runs.map((r) => trainSeries(r, 'fluency'));
  const d2 = runs.map((r) => [r.evalBefore.distinct_2, r.evals.at(-1)?.values.distinct_2]);
  if (runs.length === 0 || [...reward, ...flu].some((x) => !x)) return missing('reward_mean or fluency');
  if (d2.some(([a, b]) => typeof a !== 'number' || typeof b !== 'number')) return missing('held-out distinct_2');
  const gain = mean(reward.map((x) => tail(x!, 5) - head(x!, 2)));
  const fluDrop = mean(flu.map((x) => head(x!, 2) - tail(x!, 5)));
  const d2Drop = mean(d2.map(([a, b]) => (a as number) - (b as number)));
  return combine([
    { ok: gain > 1, why: `reward gain ${f2(gain)} (need > 1)` },
    { ok: fluDrop > 1, why: `fluency drop ${f2(fluDrop)} nats (need > 1)` },
    { ok: d2Drop > 0.15, why: `held-out distinct-2 drop ${f2(d2Drop)} (need > 0.15)` },
  ]);
}

/** Tight (arm 0) vs loose (arm 1) clipping, on every seed: higher clip fraction and a lower mean reward over the budget. */
export function checkClipping(arms: ArmRuns[]): ClaimResult {
  if (arms.length < 2) return missing('two arms (tight and loose)');
  const [tight, loose] = arms;
  const n = Math.min(tight.runs.length, loose.runs.length);
  if (n === 0) return missing('runs');
  const fails: string[] = [];
  const clipRatios: number[] = [];
  const rewardDiffs: number[] = [];
  for (let s = 0; s < n; s++) {
    const ct = trainSeries(tight.runs[s], 'clipfrac');
    const cl = trainSeries(loose.runs[s], 'clipfrac');
    const rt = trainSeries(tight.runs[s], 'reward_mean');
    const rl = trainSeries(loose.runs[s], 'reward_mean');
    if (!ct || !cl || !rt || !rl) return missing('clipfrac or reward_mean');
    const seed = tight.runs[s].seed;
    if (!(mean(ct) > mean(cl))) fails.push(`seed ${seed}: clip fraction ${f3(mean(ct))} ≤ ${f3(mean(cl))}`);
    if (!(mean(rt) < mean(rl))) fails.push(`seed ${seed}: mean reward ${f3(mean(rt))} ≥ ${f3(mean(rl))}`);
    clipRatios.push(mean(ct) / Math.max(1e-9, mean(cl)));
    rewardDiffs.push(mean(rl) - mean(rt));
  }
  if (fails.length > 0) return { ok: false, reason: fails.join('; ') };
  return {
    ok: true,
    reason: `every seed: clip fraction ×${f2(Math.min(...clipRatios))}+ higher and mean reward ${f3(Math.min(...rewardDiffs))}+ lower with ${tight.label}`,
  };
}

/** Every arm raises held-out `metric` by more than `minGain` (seed mean). */
export function checkEveryArmRaises(arms: ArmRuns[], metric = 'accuracy', minGain = 0.05): ClaimResult {
  if (arms.length === 0) return missing('runs');
  const parts: { ok: boolean; why: string }[] = [];
  for (const a of arms) {
    const g = evalGain(a.runs, metric);
    if (!g.ok) return missing(`held-out ${metric}`);
    parts.push({ ok: mean(g.gains) > minGain, why: `${a.label} ${mean(g.gains) >= 0 ? '+' : ''}${pts(mean(g.gains))} ± ${pts(sd(g.gains))}` });
  }
  const r = combine(parts);
  return { ...r, reason: `${r.reason} (need > +${pts(minGain)} each)` };
}

/**
 * Adaptive KL: from the second half of the budget on, every 5-iteration window mean of
 * `kl_token_mean` (mean over sequences of each sequence's token-mean KL, verl's scale) lies within
 * ±50% of the target, on every seed.
 */
export function checkAdaptiveKl(arms: ArmRuns[], klTarget: number, window = 5, tolerance = 0.5): ClaimResult {
  const runs = arms[0]?.runs ?? [];
  if (runs.length === 0) return missing('runs');
  const lo = klTarget * (1 - tolerance);
  const hi = klTarget * (1 + tolerance);
  let worst = klTarget;
  for (const r of runs) {
    const kl = trainSeries(r, 'kl_token_mean');
    if (!kl) return missing('kl_token_mean');
    const from = Math.floor(kl.length / 2);
    if (kl.length - from < window) return { ok: false, reason: `seed ${r.seed}: fewer than ${window} iterations in the second half` };
    for (let i = from; i + window <= kl.length; i++) {
      const m = mean(kl.slice(i, i + window));
      if (Math.abs(m - klTarget) > Math.abs(worst - klTarget)) worst = m;
      if (m < lo || m > hi) return { ok: false, reason: `seed ${r.seed}: KL window mean ${f3(m)} at iterations ${i}–${i + window - 1} outside [${f3(lo)}, ${f3(hi)}]` };
    }
  }
  return { ok: true, reason: `every 5-iteration window of the second half within ±${tolerance * 100}% of ${klTarget} (farthest ${f3(worst)})` };
}

/** Stop task: final held-out exact-length rate ≥ `min` (seed mean). */
export function checkStop(arms: ArmRuns[], min = 0.9): ClaimResult {
  const runs = arms[0]?.runs ?? [];
  const finals = runs.map((r) => r.evals.at(-1)?.values.exact_length_rate);
  if (runs.length === 0 || finals.some((x) => typeof x !== 'number')) return missing('held-out exact_length_rate');
  const m = mean(finals as number[]);
  return { ok: m >= min, reason: `exact-length rate ${pts(m)} (need ≥ ${pts(min)})` };
}

/** Thresholds of the entropy-collapse claim (defaults: what the preset's card promises). */
export interface EntropyCollapseLimits {
  /** The collapsing arm's training reward, last 10 iterations minus first 5, at least this. */
  minRewardGain: number;
  /** The collapsing arm's entropy, last 10 iterations over first 5, at most this. */
  maxEntropyRatio: number;
  /** The collapsing arm's held-out margin pass@k − sampled accuracy shrinks by at least this. */
  minMarginDrop: number;
  /**
   * Every remedy's final entropy (last 10 iterations, mean over seeds) at least this multiple of
   * the collapsing arm's; on every seed it must also end above the collapsing arm's.
   */
  minRemedyEntropyRatio: number;
  /**
   * A clip-higher arm (no entropy promise, see checkEntropyCollapse): its clip fraction over the
   * budget below this on every seed, and below the collapsing arm's on the mean over seeds.
   */
  maxClipHigherClipFrac: number;
}

export const ENTROPY_COLLAPSE_LIMITS: EntropyCollapseLimits = {
  minRewardGain: 0.2,
  maxEntropyRatio: 0.5,
  minMarginDrop: 0.05,
  minRemedyEntropyRatio: 1.25,
  maxClipHigherClipFrac: 0.05,
};

/** The preset's clip-higher arm: checked for how rarely its clip binds, not for entropy. */
export const ENTROPY_COLLAPSE_CLIP_HIGHER_ARMS: readonly string[] = ['ε_high = 0.28'];

/**
 * Entropy collapse: arm 0 is vanilla PPO, every further arm a remedy (clip-higher, clip-cov, kl-cov,
 * …), all checked against arm 0, seed by seed where the claim says so. Arm 0: the training reward
 * rises, the policy's entropy falls steeply, and held-out pass@k (k = draws per prompt, `passKey`)
 * gains less than the sampled accuracy (pass@1): the margin pass@k − pass@1 that several draws buy
 * shrinks, as the draws of a prompt come to agree. Each remedy ends with a clearly higher entropy
 * than arm 0 on average and a higher one on every seed — except the arms named in
 * `clipHigherArms`: on 3-token answers the clip binds on ~1.5% of tokens, so widening its upper
 * side changes next to nothing (docs/learning.md); for them the claim is what they measurably do:
 * a clip fraction below `maxClipHigherClipFrac` on every seed and below arm 0's on average, their
 * final entropy reported beside it.
 */
export function checkEntropyCollapse(
  arms: ArmRuns[],
  passKey = 'pass_at_4',
  limits: EntropyCollapseLimits = ENTROPY_COLLAPSE_LIMITS,
  clipHigherArms: readonly string[] = [],
): ClaimResult {
  if (arms.length < 2) return missing('at least two arms (vanilla and a remedy)');
  const entropySeries = (a: ArmRuns) => {
    const ent = a.runs.map((r) => trainSeries(r, 'entropy'));
    return a.runs.length === 0 || ent.some((x) => !x) ? undefined : (ent as number[][]);
  };
  const [vanilla, ...remedies] = arms;
  const vEnt = entropySeries(vanilla);
  const rewards = vanilla.runs.map((r) => trainSeries(r, 'reward_mean'));
  if (!vEnt) return missing('entropy');
  if (rewards.some((x) => !x)) return missing('reward_mean');
  const acc = vanilla.runs.map((r) => startFinal(r, { name: 'accuracy', source: 'eval' }));
  const pass = vanilla.runs.map((r) => startFinal(r, { name: passKey, source: 'eval' }));
  if (acc.some((x) => !x)) return missing('held-out accuracy');
  if (pass.some((x) => !x)) return missing(`held-out ${passKey}`);
  const vFinals = vEnt.map((x) => tail(x, TRAIN_FINAL_ITERS));
  const ent = { start: mean(vEnt.map((x) => head(x, TRAIN_START_ITERS))), final: mean(vFinals) };
  const rewardGain = mean(rewards.map((x) => tail(x!, TRAIN_FINAL_ITERS) - head(x!, TRAIN_START_ITERS)));
  const marginStart = mean(vanilla.runs.map((_, i) => pass[i]!.start - acc[i]!.start));
  const marginFinal = mean(vanilla.runs.map((_, i) => pass[i]!.final - acc[i]!.final));
  const v = vanilla.label;
  const parts = [
    { ok: rewardGain >= limits.minRewardGain, why: `${v}: reward +${f3(rewardGain)} (need ≥ +${f2(limits.minRewardGain)})` },
    {
      ok: ent.final <= limits.maxEntropyRatio * ent.start,
      why: `${v}: entropy ${f3(ent.start)} → ${f3(ent.final)} (×${f2(ent.final / ent.start)}, need ≤ ×${f2(limits.maxEntropyRatio)})`,
    },
    {
      ok: marginStart - marginFinal >= limits.minMarginDrop,
      why: `${v}: held-out ${passKey} − accuracy ${pts(marginStart)} → ${pts(marginFinal)} (need a drop ≥ ${pts(limits.minMarginDrop)})`,
    },
  ];
  for (const r of remedies) {
    const rEnt = entropySeries(r);
    if (!rEnt) return missing(`entropy (${r.label})`);
    if (rEnt.length !== vEnt.length) return missing(`${r.label}: as many seeds as ${v}`);
    const finals = rEnt.map((x) => tail(x, TRAIN_FINAL_ITERS));
    const final = mean(finals);
    if (clipHigherArms.includes(r.label)) {
      const fracs = r.runs.map((run) => trainSeries(run, 'clipfrac'));
      const vFracs = vanilla.runs.map((run) => trainSeries(run, 'clipfrac'));
      if (fracs.some((c) => !c) || vFracs.some((c) => !c)) return missing(`clipfrac (${r.label} or ${v})`);
      const per = fracs.map((c) => mean(c!));
      const vMean = mean(vFracs.map((c) => mean(c!)));
      const fails: string[] = [];
      per.forEach((c, s) => {
        if (!(c < limits.maxClipHigherClipFrac)) fails.push(`seed ${r.runs[s].seed}: clip fraction ${f3(c)} ≥ ${f2(limits.maxClipHigherClipFrac)}`);
      });
      if (!(mean(per) < vMean)) fails.push(`mean clip fraction ${f3(mean(per))} ≥ ${v}'s ${f3(vMean)}`);
      parts.push({
        ok: fails.length === 0,
        why:
          fails.length > 0
            ? `${r.label}: ${fails.join(', ')}`
            : `${r.label}: clip fraction ${f3(Math.min(...per))}–${f3(Math.max(...per))} (below ${f2(limits.maxClipHigherClipFrac)}: barely binds), mean ${f3(mean(per))} below ${v}'s ${f3(vMean)}; final entropy ${f3(final)} (×${f2(final / ent.final)} ${v}'s, no promise)`,
      });
      continue;
    }
    const below = finals.flatMap((e, s) => (e > vFinals[s] ? [] : [`seed ${r.runs[s].seed}: ${f3(e)} ≤ ${v}'s ${f3(vFinals[s])}`]));
    parts.push({
      ok: final >= limits.minRemedyEntropyRatio * ent.final && below.length === 0,
      why: `${r.label}: final entropy ${f3(final)} vs ${v} ${f3(ent.final)} (×${f2(final / ent.final)}, need ≥ ×${f2(limits.minRemedyEntropyRatio)}; ×${f2(Math.min(...finals.map((e, s) => e / vFinals[s])))}+ seed by seed, need > ×1)${below.length > 0 ? `: ${below.join(', ')}` : ''}`,
    });
  }
  return combine(parts);
}

/** Presets without a claim of their own: reward over the last 20 iterations above the first 10, in every arm. */
export function checkGeneric(arms: ArmRuns[]): ClaimResult {
  if (arms.length === 0) return missing('runs');
  const parts: { ok: boolean; why: string }[] = [];
  for (const a of arms) {
    const rewards = a.runs.map((r) => trainSeries(r, 'reward_mean'));
    if (a.runs.length === 0 || rewards.some((x) => !x)) return missing('reward_mean');
    const first = mean(rewards.map((x) => head(x!, 10)));
    const last = mean(rewards.map((x) => tail(x!, 20)));
    parts.push({ ok: last > first, why: `${a.label}: reward first 10 ${f3(first)} → last 20 ${f3(last)}` });
  }
  return combine(parts);
}

// ---------------------------------------------------------------------------------------------

const REWARD: MetricSpec = { name: 'reward_mean', source: 'train' };

/** The claim `npm run learning` checks for the preset called `name`. */
export function claimFor(name: string): ClaimSpec {
  switch (name) {
    case 'Learn arithmetic':
      return {
        metric: { name: 'accuracy', source: 'eval' },
        text: 'held-out sampled accuracy +25 points and greedy +15 over the SFT model; reward mean over the last 20 iterations ≥ 2× the first 10; greedy accuracy on carry and on no-carry problems each falls by at most 10 points (no "always/never carry" shortcut)',
        kind: 'specific',
        check: (arms) => checkLearnArithmetic(arms),
      };
    case 'Reward hacking without KL':
      return {
        metric: REWARD,
        text: 'both arms raise the reward; KL at β = 0 ≥ 5× KL at β > 0; fluency under the reference drops at β = 0 (> 1.5 nats) and stays > 1 nat above it with β > 0',
        kind: 'specific',
        check: (arms) => checkRewardHacking(arms),
      };
    case 'Write your own reward':
      return {
        metric: REWARD,
        text: 'the function’s score rises by > 1; fluency under the reference drops by > 1 nat; held-out distinct-2 drops by > 0.15 (PPO repeats the paid word)',
        kind: 'specific',
        check: (arms) => checkOwnReward(arms),
      };
    case 'Tight vs loose clipping':
      return {
        metric: REWARD,
        text: 'on every seed the tight arm has a higher mean clip fraction and a lower mean training reward over the budget',
        kind: 'specific',
        check: (arms) => checkClipping(arms),
      };
    case 'PPO vs GRPO':
      return {
        metric: { name: 'accuracy', source: 'eval' },
        text: 'both arms raise held-out sampled accuracy by more than 5 points',
        kind: 'specific',
        check: (arms) => checkEveryArmRaises(arms, 'accuracy', 0.05),
      };
    case 'Adaptive KL':
      return {
        metric: { name: 'kl_token_mean', source: 'train' },
        text: 'from the second half of the budget, every 5-iteration mean of kl_token_mean lies within ±50% of klTarget',
        kind: 'specific',
        check: (arms, ctx) => checkAdaptiveKl(arms, ctx.klTarget),
      };
    case 'Stop properly':
      return {
        metric: { name: 'exact_length_rate', source: 'eval' },
        text: 'held-out exact-length rate ≥ 90% at the end of the budget',
        kind: 'specific',
        check: (arms) => checkStop(arms),
      };
    case 'Entropy collapse':
      return {
        metric: { name: 'entropy', source: 'train' },
        text: 'vanilla (the first arm): training reward rises by ≥ 0.2, entropy (last 10 iterations) ≤ 0.5× its first 5, held-out pass@4 − sampled accuracy shrinks by ≥ 5 points; clip-cov and kl-cov each end with ≥ 1.25× vanilla’s entropy (seed means) and above it on every seed; clip-higher (ε_high = 0.28), which barely binds here, clips < 5% of tokens on every seed and fewer than vanilla on average',
        kind: 'specific',
        check: (arms) => checkEntropyCollapse(arms, 'pass_at_4', ENTROPY_COLLAPSE_LIMITS, ENTROPY_COLLAPSE_CLIP_HIGHER_ARMS),
      };
    default:
      return {
        metric: REWARD,
        text: 'generic: reward mean over the last 20 iterations > mean over the first 10',
        kind: 'generic',
        check: (arms) => checkGeneric(arms),
      };
  }
}
