// `npm run learning` and `npm run train -- --preset`: preset lookup, the printed table, and the
// claim checkers on synthetic metric streams: each checker passes a stream that keeps its claim and
// fails (or reports "metric missing") on one that breaks it.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  checkAdaptiveKl,
  checkClipping,
  checkEntropyCollapse,
  checkEveryArmRaises,
  checkGeneric,
  checkLearnArithmetic,
  checkOwnReward,
  checkRewardHacking,
  checkStop,
  claimFor,
  ENTROPY_COLLAPSE_CLIP_HIGHER_ARMS,
  ENTROPY_COLLAPSE_LIMITS,
  itersToHalfGain,
  type ArmRuns,
} from '../../src/cli/learningClaims.ts';
import { formatTable, mergeResults, summarizeArm, type PresetResult } from '../../src/cli/learningTable.ts';
import { resolvePresetArm, type RunRecord } from '../../src/cli/presetRun.ts';
import { findPreset, PRESETS, presetArms } from '../../src/rl/presets.ts';

/** A run whose training metrics follow `f(i)` per name and whose evaluations are given. */
function run(seed: number, iters: number, f: Record<string, (i: number) => number>, before: Record<string, number> = {}, after: Record<string, number> = {}): RunRecord {
  const metrics = Array.from({ length: iters }, (_, i) => Object.fromEntries(Object.entries(f).map(([k, g]) => [k, g(i)])));
  // Halfway through, three quarters of the gain.
  const mid = Object.fromEntries(Object.entries(after).map(([k, v]) => [k, (before[k] ?? 0) + 0.75 * (v - (before[k] ?? 0))]));
  return {
    seed,
    evalBefore: before,
    evals: [
      { iter: Math.floor(iters / 2), values: mid },
      { iter: iters, values: after },
    ],
    metrics,
    wallS: 1,
  };
}
const arm = (label: string, runs: RunRecord[]): ArmRuns => ({ label, runs });
const familyDir = mkdtempSync(join(tmpdir(), 'learning-family-'));
afterAll(() => rmSync(familyDir, { recursive: true, force: true }));

/** A `npm run learning -- --json` file of no results measured in `family` (what --merge compares first). */
function familyFile(family: string): string {
  const path = join(familyDir, `${family}.json`);
  writeFileSync(path, JSON.stringify({ started: '2026-12-02T00:00:00Z', backend: 'cpu', family, seeds: [1], evalCount: 64, evalSamples: 4, results: [] }));
  return path;
}
const seeds = [1, 2, 3];
const ramp = (from: number, to: number, n: number) => (i: number) => from + ((to - from) * Math.min(i, n)) / n;

describe('preset lookup for npm run train / npm run learning', () => {
  it('resolves the first arm by default, a named arm, and explains unknown names and arms', () => {
    const first = resolvePresetArm('Tight vs loose clipping');
    expect('error' in first).toBe(false);
    if (!('error' in first)) expect(first.label).toBe(PRESETS.find((p) => p.name === 'Tight vs loose clipping')!.arms![0].label);
    const loose = resolvePresetArm('Tight vs loose clipping', 'ε = 0.5');
    expect(!('error' in loose) && loose.values.clipLow).toBe(0.5);
    const bad = resolvePresetArm('No such preset');
    expect('error' in bad && bad.error).toMatch(/unknown preset "No such preset"/);
    for (const p of PRESETS) expect('error' in bad && bad.error).toContain(`"${p.name}"`);
    const badArm = resolvePresetArm('Tight vs loose clipping', 'ε = 9');
    expect('error' in badArm && badArm.error).toMatch(/no arm "ε = 9".*"ε = 0.05", "ε = 0.5"/);
  });

  it.each([
    ['train', ['src/cli/train.ts', '--preset', 'No such preset', '--backend', 'cpu']],
    ['learning', ['src/cli/learning.ts', '--preset', 'No such preset']],
  ])('npm run %s with an unknown preset exits 2 and lists the valid names', { timeout: 120_000 }, (_name, args) => {
    // tsx start-up alone takes seconds (tens of seconds on a loaded machine); node --import tsx
    // runs what `npm run` runs without npx's own second of start-up.
    const r = spawnSync(process.execPath, ['--import', 'tsx', ...args], { encoding: 'utf8', timeout: 110_000 });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('unknown preset "No such preset"');
    for (const p of PRESETS) expect(r.stderr).toContain(`"${p.name}"`);
  });
});

describe('claim checkers', () => {
  it('Learn arithmetic: passes +30/+20 points with reward ×3, fails each target separately', () => {
    const NC = { greedy_accuracy_carry: 0.5, greedy_accuracy_no_carry: 0.95 };
    const good = (s: number) => run(s, 60, { reward_mean: ramp(0.2, 0.8, 30) }, { accuracy: 0.2, greedy_accuracy: 0.2, ...NC }, { accuracy: 0.5, greedy_accuracy: 0.4, ...NC });
    expect(checkLearnArithmetic([arm('a', seeds.map(good))]).ok).toBe(true);
    const smallSampled = (s: number) =>
      run(s, 60, { reward_mean: ramp(0.2, 0.8, 30) }, { accuracy: 0.2, greedy_accuracy: 0.2, ...NC }, { accuracy: 0.4, greedy_accuracy: 0.4, ...NC });
    const r1 = checkLearnArithmetic([arm('a', seeds.map(smallSampled))]);
    expect(r1.ok).toBe(false);
    expect(r1.reason).toMatch(/sampled accuracy \+20\.0 pts/);
    const smallGreedy = (s: number) =>
      run(s, 60, { reward_mean: ramp(0.2, 0.8, 30) }, { accuracy: 0.2, greedy_accuracy: 0.2, ...NC }, { accuracy: 0.5, greedy_accuracy: 0.3, ...NC });
    expect(checkLearnArithmetic([arm('a', seeds.map(smallGreedy))]).ok).toBe(false);
    // Accuracy targets met, but the reward was already high in the first 10 iterations.
    const flat = (s: number) => run(s, 60, { reward_mean: ramp(0.5, 0.8, 5) }, { accuracy: 0.2, greedy_accuracy: 0.2, ...NC }, { accuracy: 0.5, greedy_accuracy: 0.4, ...NC });
    const r2 = checkLearnArithmetic([arm('a', seeds.map(flat))]);
    expect(r2.ok).toBe(false);
    expect(r2.reason).toMatch(/reward last 20 \/ first 10/);
    // Accuracy and reward targets met through the "always carry" shortcut: no-carry accuracy collapses.
    const shortcut = (s: number) =>
      run(
        s,
        60,
        { reward_mean: ramp(0.2, 0.8, 30) },
        { accuracy: 0.2, greedy_accuracy: 0.2, ...NC },
        { accuracy: 0.5, greedy_accuracy: 0.4, ...NC, greedy_accuracy_no_carry: 0.05 },
      );
    const r3 = checkLearnArithmetic([arm('a', seeds.map(shortcut))]);
    expect(r3.ok).toBe(false);
    expect(r3.reason).toMatch(/no-carry problems −90\.0 pts/);
    // The mirror shortcut, "never carry": carry accuracy collapses.
    const never = (s: number) =>
      run(s, 60, { reward_mean: ramp(0.2, 0.8, 30) }, { accuracy: 0.2, greedy_accuracy: 0.2, ...NC }, { accuracy: 0.5, greedy_accuracy: 0.4, ...NC, greedy_accuracy_carry: 0.1 });
    const r4 = checkLearnArithmetic([arm('a', seeds.map(never))]);
    expect(r4.ok).toBe(false);
    expect(r4.reason).toMatch(/on carry problems −40\.0 pts/);
    expect(checkLearnArithmetic([arm('a', [run(1, 60, {}, { accuracy: 0.2, greedy_accuracy: 0.2, ...NC }, { accuracy: 0.5, greedy_accuracy: 0.4, ...NC })])]).ok).toBeNull();
  });

  it('Reward hacking: passes the measured pattern, fails on a small KL ratio and on a fluent β = 0', () => {
    const hacked = (s: number) => run(s, 12, { reward_mean: ramp(-0.5, 1, 10), kl_seq: ramp(0, 40, 10), fluency: ramp(-0.5, -4, 10) });
    const tied = (s: number) => run(s, 12, { reward_mean: ramp(-0.5, 0.5, 10), kl_seq: ramp(0, 5, 10), fluency: ramp(-0.5, -1.2, 10) });
    expect(checkRewardHacking([arm('β = 0', seeds.map(hacked)), arm('β = 0.6', seeds.map(tied))]).ok).toBe(true);
    const closeKl = (s: number) => run(s, 12, { reward_mean: ramp(-0.5, 0.5, 10), kl_seq: ramp(0, 20, 10), fluency: ramp(-0.5, -1.2, 10) });
    expect(checkRewardHacking([arm('β = 0', seeds.map(hacked)), arm('β = 0.6', seeds.map(closeKl))]).reason).toMatch(/need ≥ 5/);
    expect(checkRewardHacking([arm('β = 0', seeds.map(hacked)), arm('β = 0.6', seeds.map(closeKl))]).ok).toBe(false);
    const fluent = (s: number) => run(s, 12, { reward_mean: ramp(-0.5, 1, 10), kl_seq: ramp(0, 40, 10), fluency: ramp(-0.5, -1, 10) });
    expect(checkRewardHacking([arm('β = 0', seeds.map(fluent)), arm('β = 0.6', seeds.map(tied))]).ok).toBe(false);
    const noGain = (s: number) => run(s, 12, { reward_mean: () => 0, kl_seq: ramp(0, 5, 10), fluency: ramp(-0.5, -1.2, 10) });
    expect(checkRewardHacking([arm('β = 0', seeds.map(hacked)), arm('β = 0.6', seeds.map(noGain))]).ok).toBe(false);
  });

  it('Write your own reward: passes a gamed function, fails on no gain, a fluent policy or varied text', () => {
    const gamed = (s: number) => run(s, 30, { reward_mean: ramp(0.1, 2.6, 20), fluency: ramp(-0.5, -2.5, 20) }, { distinct_2: 0.49 }, { distinct_2: 0.15 });
    expect(checkOwnReward([arm('a', seeds.map(gamed))])).toEqual({ ok: true, reason: expect.stringMatching(/reward gain 2\.\d\d/) });
    const noGain = (s: number) => run(s, 30, { reward_mean: () => 0.1, fluency: ramp(-0.5, -2.5, 20) }, { distinct_2: 0.49 }, { distinct_2: 0.15 });
    expect(checkOwnReward([arm('a', seeds.map(noGain))]).ok).toBe(false);
    const fluent = (s: number) => run(s, 30, { reward_mean: ramp(0.1, 2.6, 20), fluency: ramp(-0.5, -1, 20) }, { distinct_2: 0.49 }, { distinct_2: 0.15 });
    expect(checkOwnReward([arm('a', seeds.map(fluent))]).reason).toMatch(/fluency drop 0\.49 nats \(need > 1\)/);
    const varied = (s: number) => run(s, 30, { reward_mean: ramp(0.1, 2.6, 20), fluency: ramp(-0.5, -2.5, 20) }, { distinct_2: 0.49 }, { distinct_2: 0.45 });
    expect(checkOwnReward([arm('a', seeds.map(varied))]).ok).toBe(false);
    expect(checkOwnReward([arm('a', [run(1, 30, { reward_mean: () => 1 })])]).ok).toBeNull();
    expect(claimFor('Write your own reward').kind).toBe('specific');
  });

  it('Tight vs loose clipping: must hold on every seed', () => {
    const tight = (s: number) => run(s, 40, { clipfrac: () => 0.4, reward_mean: ramp(0.2, 0.5, 40) });
    const loose = (s: number) => run(s, 40, { clipfrac: () => 0.05, reward_mean: ramp(0.2, 0.8, 20) });
    expect(checkClipping([arm('ε = 0.05', seeds.map(tight)), arm('ε = 0.5', seeds.map(loose))]).ok).toBe(true);
    // Seed 3: the tight arm happens to learn faster: the claim fails and names the seed.
    const looseSlow3 = (s: number) => (s === 3 ? run(s, 40, { clipfrac: () => 0.05, reward_mean: () => 0.2 }) : loose(s));
    const r = checkClipping([arm('ε = 0.05', seeds.map(tight)), arm('ε = 0.5', seeds.map(looseSlow3))]);
    expect(r.ok).toBe(false);
    expect(r.reason).toMatch(/seed 3: mean reward/);
    const clipsLess = (s: number) => run(s, 40, { clipfrac: () => 0.01, reward_mean: ramp(0.2, 0.5, 40) });
    expect(checkClipping([arm('ε = 0.05', seeds.map(clipsLess)), arm('ε = 0.5', seeds.map(loose))]).ok).toBe(false);
  });

  it('Entropy collapse: vanilla (arm 0) against any number of remedy arms', () => {
    // Vanilla: reward 0.3 → 0.8, entropy 0.2 → 0.04, pass@4 − accuracy 15 → 2 points.
    const vanilla = (s: number) =>
      run(s, 40, { reward_mean: ramp(0.3, 0.8, 30), entropy: ramp(0.2, 0.04, 30) }, { accuracy: 0.25, pass_at_4: 0.4 }, { accuracy: 0.8, pass_at_4: 0.82 });
    // A remedy: entropy stays near 0.15 (≥ 1.25× vanilla's 0.04, and above it on every seed).
    const remedy = (s: number) =>
      run(s, 40, { reward_mean: ramp(0.3, 0.8, 30), entropy: ramp(0.2, 0.15, 30) }, { accuracy: 0.25, pass_at_4: 0.4 }, { accuracy: 0.8, pass_at_4: 0.95 });
    const ok = checkEntropyCollapse([arm('vanilla', seeds.map(vanilla)), arm('clip-higher', seeds.map(remedy))]);
    expect(ok.ok).toBe(true);
    expect(ok.reason).toMatch(/vanilla: entropy 0\.\d+ → 0\.040/);
    expect(ok.reason).toMatch(/held-out pass_at_4 − accuracy 15\.0 pts → 2\.0 pts/);
    // Written for N remedies: a third arm that does not hold the entropy fails the claim and is named.
    const weak = (s: number) =>
      run(s, 40, { reward_mean: ramp(0.3, 0.8, 30), entropy: ramp(0.2, 0.045, 30) }, { accuracy: 0.25, pass_at_4: 0.4 }, { accuracy: 0.8, pass_at_4: 0.82 });
    expect(checkEntropyCollapse([arm('vanilla', seeds.map(vanilla)), arm('clip-higher', seeds.map(remedy)), arm('kl-cov', seeds.map(remedy))]).ok).toBe(true);
    const three = checkEntropyCollapse([arm('vanilla', seeds.map(vanilla)), arm('clip-higher', seeds.map(remedy)), arm('clip-cov', seeds.map(weak))]);
    expect(three.ok).toBe(false);
    expect(three.reason).toMatch(/^clip-cov: final entropy 0\.045 vs vanilla 0\.040 \(×1\.13, need ≥ ×1\.25/);
    // Enough on average is not enough when one seed ends at or below vanilla's entropy: that seed is named.
    const uneven = (s: number) =>
      run(s, 40, { reward_mean: ramp(0.3, 0.8, 30), entropy: ramp(0.2, s === 2 ? 0.04 : 0.2, 30) }, { accuracy: 0.25, pass_at_4: 0.4 }, { accuracy: 0.8, pass_at_4: 0.95 });
    const u = checkEntropyCollapse([arm('vanilla', seeds.map(vanilla)), arm('clip-cov', seeds.map(uneven))]);
    expect(u.ok).toBe(false);
    expect(u.reason).toMatch(/^clip-cov: final entropy 0\.147 vs vanilla 0\.040 \(×3\.67, need ≥ ×1\.25; ×1\.00\+ seed by seed, need > ×1\): seed 2: 0\.040 ≤ vanilla's 0\.040$/);
    // A remedy with fewer seeds than vanilla cannot be compared seed by seed.
    expect(checkEntropyCollapse([arm('vanilla', seeds.map(vanilla)), arm('clip-cov', [1, 2].map(remedy))]).ok).toBeNull();
    // No collapse in arm 0: entropy holds, or several draws keep their margin over one.
    const steady = (s: number) =>
      run(s, 40, { reward_mean: ramp(0.3, 0.8, 30), entropy: ramp(0.2, 0.15, 30) }, { accuracy: 0.25, pass_at_4: 0.4 }, { accuracy: 0.8, pass_at_4: 0.82 });
    expect(checkEntropyCollapse([arm('vanilla', seeds.map(steady)), arm('clip-higher', seeds.map(remedy))]).reason).toMatch(/need ≤ ×0\.50/);
    const diverse = (s: number) =>
      run(s, 40, { reward_mean: ramp(0.3, 0.8, 30), entropy: ramp(0.2, 0.04, 30) }, { accuracy: 0.25, pass_at_4: 0.4 }, { accuracy: 0.6, pass_at_4: 0.72 });
    const d = checkEntropyCollapse([arm('vanilla', seeds.map(diverse)), arm('clip-higher', seeds.map(remedy))]);
    expect(d.ok).toBe(false);
    expect(d.reason).toMatch(/15\.0 pts → 12\.0 pts \(need a drop ≥ 5\.0 pts\)/);
    // No reward gain: fails.
    const flat = (s: number) => run(s, 40, { reward_mean: () => 0.3, entropy: ramp(0.2, 0.04, 30) }, { accuracy: 0.25, pass_at_4: 0.4 }, { accuracy: 0.8, pass_at_4: 0.82 });
    expect(checkEntropyCollapse([arm('vanilla', seeds.map(flat)), arm('clip-higher', seeds.map(remedy))]).ok).toBe(false);
    // Missing metrics and a single arm are not a pass.
    const noPass = (s: number) => run(s, 40, { reward_mean: ramp(0.3, 0.8, 30), entropy: ramp(0.2, 0.04, 30) }, { accuracy: 0.25 }, { accuracy: 0.8 });
    expect(checkEntropyCollapse([arm('vanilla', seeds.map(noPass)), arm('clip-higher', seeds.map(remedy))])).toEqual({ ok: null, reason: 'metric missing: held-out pass_at_4' });
    const noEntropy = (s: number) => run(s, 40, { reward_mean: ramp(0.3, 0.8, 30) }, { accuracy: 0.25, pass_at_4: 0.4 }, { accuracy: 0.8, pass_at_4: 0.82 });
    expect(checkEntropyCollapse([arm('vanilla', seeds.map(vanilla)), arm('clip-higher', seeds.map(noEntropy))]).ok).toBeNull();
    expect(checkEntropyCollapse([arm('vanilla', seeds.map(vanilla))]).ok).toBeNull();
    expect(claimFor('Entropy collapse').kind).toBe('specific');
  });

  it('Entropy collapse: a clip-higher arm is held to clipping < 5% on every seed and less than vanilla on average', () => {
    const labels = ['ε_high = 0.28'];
    const vanilla = (s: number) =>
      run(s, 40, { reward_mean: ramp(0.3, 0.8, 30), entropy: ramp(0.2, 0.04, 30), clipfrac: () => 0.02 }, { accuracy: 0.25, pass_at_4: 0.4 }, { accuracy: 0.8, pass_at_4: 0.82 });
    const remedy = (s: number) =>
      run(s, 40, { reward_mean: ramp(0.3, 0.8, 30), entropy: ramp(0.2, 0.15, 30), clipfrac: () => 0.01 }, { accuracy: 0.25, pass_at_4: 0.4 }, { accuracy: 0.8, pass_at_4: 0.95 });
    // Same entropy as vanilla but clips less: what clip-higher does here; holds.
    const clipHigher = (s: number) =>
      run(s, 40, { reward_mean: ramp(0.3, 0.8, 30), entropy: ramp(0.2, 0.041, 30), clipfrac: () => 0.015 }, { accuracy: 0.25, pass_at_4: 0.4 }, { accuracy: 0.8, pass_at_4: 0.82 });
    const ok = checkEntropyCollapse(
      [arm('vanilla', seeds.map(vanilla)), arm('ε_high = 0.28', seeds.map(clipHigher)), arm('kl-cov', seeds.map(remedy))],
      'pass_at_4',
      ENTROPY_COLLAPSE_LIMITS,
      labels,
    );
    expect(ok.ok).toBe(true);
    expect(ok.reason).toMatch(
      /ε_high = 0\.28: clip fraction 0\.015–0\.015 \(below 0\.05: barely binds\), mean 0\.015 below vanilla's 0\.020; final entropy 0\.041 \(×1\.02 vanilla's, no promise\)/,
    );
    // Without the label it is an ordinary remedy and fails the entropy test.
    expect(checkEntropyCollapse([arm('vanilla', seeds.map(vanilla)), arm('ε_high = 0.28', seeds.map(clipHigher))]).reason).toMatch(/ε_high = 0\.28: final entropy 0\.041/);
    // One seed clipping as much as vanilla is fine while the mean stays below; a mean above vanilla's fails.
    const clipsMore2 = (s: number) => (s === 2 ? run(s, 40, { entropy: ramp(0.2, 0.041, 30), clipfrac: () => 0.02 }) : clipHigher(s));
    expect(checkEntropyCollapse([arm('vanilla', seeds.map(vanilla)), arm('ε_high = 0.28', seeds.map(clipsMore2))], 'pass_at_4', ENTROPY_COLLAPSE_LIMITS, labels).ok).toBe(true);
    const clipsMore = (s: number) => run(s, 40, { entropy: ramp(0.2, 0.041, 30), clipfrac: () => (s === 2 ? 0.015 : 0.03) });
    const r2 = checkEntropyCollapse([arm('vanilla', seeds.map(vanilla)), arm('ε_high = 0.28', seeds.map(clipsMore))], 'pass_at_4', ENTROPY_COLLAPSE_LIMITS, labels);
    expect(r2.ok).toBe(false);
    expect(r2.reason).toMatch(/^ε_high = 0\.28: mean clip fraction 0\.025 ≥ vanilla's 0\.020$/);
    // A clip that binds often (≥ 5%) on one seed is not "barely binds", even when vanilla clips more.
    const vanillaHigh = (s: number) =>
      run(s, 40, { reward_mean: ramp(0.3, 0.8, 30), entropy: ramp(0.2, 0.04, 30), clipfrac: () => 0.2 }, { accuracy: 0.25, pass_at_4: 0.4 }, { accuracy: 0.8, pass_at_4: 0.82 });
    const binds = (s: number) => run(s, 40, { entropy: ramp(0.2, 0.041, 30), clipfrac: () => (s === 3 ? 0.08 : 0.01) });
    expect(checkEntropyCollapse([arm('vanilla', seeds.map(vanillaHigh)), arm('ε_high = 0.28', seeds.map(binds))], 'pass_at_4', ENTROPY_COLLAPSE_LIMITS, labels).reason).toMatch(
      /^ε_high = 0\.28: seed 3: clip fraction 0\.080 ≥ 0\.05$/,
    );
    // No clipfrac logged: not a pass.
    const noClip = (s: number) => run(s, 40, { entropy: ramp(0.2, 0.041, 30) });
    expect(checkEntropyCollapse([arm('vanilla', seeds.map(vanilla)), arm('ε_high = 0.28', seeds.map(noClip))], 'pass_at_4', ENTROPY_COLLAPSE_LIMITS, labels).ok).toBeNull();
    // The preset's clip-higher arm is the one the claim names.
    expect(presetArms(findPreset('Entropy collapse')!).map((a) => a.label)).toEqual(expect.arrayContaining([...ENTROPY_COLLAPSE_CLIP_HIGHER_ARMS]));
  });

  it('PPO vs GRPO: both arms must raise held-out accuracy', () => {
    const up = (s: number) => run(s, 10, {}, { accuracy: 0.2 }, { accuracy: 0.4 });
    const flat = (s: number) => run(s, 10, {}, { accuracy: 0.2 }, { accuracy: 0.22 });
    expect(checkEveryArmRaises([arm('PPO', seeds.map(up)), arm('GRPO', seeds.map(up))]).ok).toBe(true);
    const r = checkEveryArmRaises([arm('PPO', seeds.map(up)), arm('GRPO', seeds.map(flat))]);
    expect(r.ok).toBe(false);
    expect(r.reason).toMatch(/GRPO \+2\.0 pts/);
  });

  it('Adaptive KL: second-half 5-iteration windows within ±50% of the target; missing metric is not a pass', () => {
    const settles = (s: number) => run(s, 40, { kl_token_mean: (i) => (i < 20 ? 0.1 * i : 1 + 0.3 * Math.sin(i)) });
    expect(checkAdaptiveKl([arm('a', seeds.map(settles))], 1).ok).toBe(true);
    const spike = (s: number) => run(s, 40, { kl_token_mean: (i) => (i >= 30 && i < 35 ? 2 : 1) });
    const r = checkAdaptiveKl([arm('a', seeds.map(spike))], 1);
    expect(r.ok).toBe(false);
    expect(r.reason).toMatch(/outside \[0\.500, 1\.500\]/);
    const missing = checkAdaptiveKl(
      [
        arm(
          'a',
          seeds.map((s) => run(s, 40, { kl: () => 1 })),
        ),
      ],
      1,
    );
    expect(missing.ok).toBeNull();
    expect(missing.reason).toBe('metric missing: kl_token_mean');
  });

  it('Stop properly: final exact-length rate ≥ 90%', () => {
    expect(
      checkStop([
        arm(
          'a',
          seeds.map((s) => run(s, 10, {}, { exact_length_rate: 0.5 }, { exact_length_rate: 0.93 })),
        ),
      ]).ok,
    ).toBe(true);
    expect(
      checkStop([
        arm(
          'a',
          seeds.map((s) => run(s, 10, {}, { exact_length_rate: 0.5 }, { exact_length_rate: 0.85 })),
        ),
      ]).ok,
    ).toBe(false);
  });

  it('generic: reward over the last 20 iterations above the first 10, in every arm', () => {
    expect(
      checkGeneric([
        arm(
          'a',
          seeds.map((s) => run(s, 40, { reward_mean: ramp(0, 1, 40) })),
        ),
      ]).ok,
    ).toBe(true);
    expect(
      checkGeneric([
        arm(
          'a',
          seeds.map((s) => run(s, 40, { reward_mean: ramp(1, 0, 40) })),
        ),
      ]).ok,
    ).toBe(false);
    expect(claimFor('DAPO').kind).toBe('generic');
    expect(claimFor('Learn arithmetic').kind).toBe('specific');
  });

  it('iterations to half the gain: from the evaluations or a 5-iteration mean of the training curve', () => {
    const runs = seeds.map((s) => run(s, 40, { reward_mean: ramp(0, 1, 20) }, { accuracy: 0.2 }, { accuracy: 0.6 }));
    // Eval curve: 0.2 → 0.5 (iter 20) → 0.6 (iter 40); half of the gain is 0.4, first reached at 20.
    expect(itersToHalfGain(runs, { name: 'accuracy', source: 'eval' })).toBe(20);
    // Training: start = mean of the first 5 (0.1), final = last 10 (1): half = 0.55; the trailing
    // 5-iteration mean at index i is (i − 2)/20, first ≥ 0.55 at i = 13, i.e. after 14 iterations.
    expect(itersToHalfGain(runs, { name: 'reward_mean', source: 'train' })).toBe(14);
    const down = seeds.map((s) => run(s, 10, {}, { accuracy: 0.5 }, { accuracy: 0.3 }));
    expect(itersToHalfGain(down, { name: 'accuracy', source: 'eval' })).toBeNull();
  });
});

describe('npm run learning --arm / --merge', () => {
  const clipping = findPreset('Tight vs loose clipping')!;
  const [tight, loose] = presetArms(clipping).map((a) => a.label);
  // tight clips more and earns less than loose on every seed: the claim holds for the pair
  const tightRun = (s: number) => run(s, 20, { clipfrac: () => 0.2, reward_mean: ramp(0.2, 0.4, 10) });
  const looseRun = (s: number) => run(s, 20, { clipfrac: () => 0.05, reward_mean: ramp(0.2, 0.6, 10) });
  /** What `npm run learning --preset … --arm label` records: one arm, its claim unchecked. */
  const part = (label: string, f: (s: number) => RunRecord, ss = seeds): PresetResult =>
    mergeResults(
      [
        {
          preset: clipping.name,
          iterations: 20,
          claim: { text: '', kind: 'specific', ok: null, reason: '' },
          arms: [{ ...summarizeArm(arm(label, ss.map(f)), { name: 'clipfrac', source: 'train' }), runs: ss.map(f) }],
        },
      ],
      [clipping],
    )[0];

  it('one arm alone leaves the claim unchecked; the arms merged give the claim a run of both gives', () => {
    const one = part(tight, tightRun);
    expect(one.claim.ok).toBeNull();
    expect(one.claim.reason).toBe('1 of 2 arms: put the runs together with --merge to check the claim');
    // the files may come in any order and split the seeds; the arms come back in the preset's order
    const merged = mergeResults([part(loose, looseRun), part(tight, tightRun, [3]), part(tight, tightRun, [1, 2])], [clipping]);
    expect(merged).toHaveLength(1);
    expect(merged[0].arms.map((a) => a.label)).toEqual([tight, loose]);
    expect(merged[0].arms[0].runs.map((r) => r.seed)).toEqual(seeds);
    const whole = claimFor(clipping.name).check([arm(tight, seeds.map(tightRun)), arm(loose, seeds.map(looseRun))], { klTarget: 0 });
    expect(whole.ok).toBe(true);
    expect(merged[0].claim).toMatchObject(whole);
    // swapped, the claim fails, as it would in one run
    expect(mergeResults([part(tight, looseRun), part(loose, tightRun)], [clipping])[0].claim.ok).toBe(false);
  });

  it('refuses runs that cannot be put together, naming the preset and what differs', () => {
    const longer = { ...part(loose, looseRun), iterations: 40 };
    expect(() => mergeResults([part(tight, tightRun), longer], [clipping])).toThrow(/Tight vs loose clipping: the runs to merge have different budgets \(20, 40 iterations\)/);
    expect(() => mergeResults([part(tight, tightRun), part(tight, tightRun, [3])], [clipping])).toThrow(/seed 3 is in more than one of the runs to merge/);
    expect(() => mergeResults([part(tight, tightRun), part(loose, looseRun, [1, 2])], [clipping])).toThrow(/arm ε = 0\.5 has seeds 1, 2, arm ε = 0\.05 1, 2, 3/);
  });

  it.each([
    [['--preset', 'Tight vs loose clipping', '--arm', 'ε = 9'], /no arm "ε = 9"/],
    [['--arm', 'ε = 0.5'], /needs exactly one --preset/],
    [['--merge', '/nonexistent/learning.json'], /--merge \/nonexistent\/learning\.json: not a file `npm run learning -- --json` wrote/],
    [['--merge', 'a.json', '--preset', 'DAPO'], /leave out --preset, --arm and --family/],
    [['--family', 'llama'], /--family = "llama": allowed: gpt, hf/],
    [['--merge', familyFile('gpt'), '--merge', familyFile('hf')], /the files were measured differently:\n.*cpu backend, held-out.*\n.*cpu backend, family hf, held-out/],
  ])('npm run learning %j exits 2 and says why', { timeout: 120_000 }, (args, why) => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/learning.ts', ...args], { encoding: 'utf8', timeout: 110_000 });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(why);
  });
});

describe('the learning table', () => {
  it('prints one row per arm with mean ± sd, iterations to half gain, wall time and the claim', () => {
    const metric = { name: 'accuracy', source: 'eval' } as const;
    const runs = [run(1, 20, {}, { accuracy: 0.2 }, { accuracy: 0.5 }), run(2, 20, {}, { accuracy: 0.2 }, { accuracy: 0.7 })];
    const results: PresetResult[] = [
      {
        preset: 'PPO vs GRPO',
        iterations: 20,
        claim: { text: 't', kind: 'specific', ok: false, reason: 'GRPO +1.0 pts' },
        arms: [
          { ...summarizeArm(arm('PPO (GAE)', runs), metric), runs },
          { ...summarizeArm(arm('GRPO', runs), metric), runs },
        ],
      },
      {
        preset: 'DAPO',
        iterations: 20,
        claim: { text: 't', kind: 'generic', ok: null, reason: 'metric missing: reward_mean' },
        arms: [{ ...summarizeArm(arm('DAPO', runs), metric), runs }],
      },
    ];
    const lines = formatTable(results).split('\n');
    expect(lines[0]).toBe('| preset | arm | metric | SFT → final (mean ± sd) | iters to ½ gain | wall / run | claim |');
    expect(lines).toHaveLength(5);
    expect(lines[2]).toBe('| PPO vs GRPO | PPO (GAE) | accuracy (held-out) | 20.0% ± 0.0% → 60.0% ± 14.1% | 10 / 20 | 1 s | (paired ↓) |');
    expect(lines[3]).toBe('|  | GRPO | accuracy (held-out) | 20.0% ± 0.0% → 60.0% ± 14.1% | 10 / 20 | 1 s | ✗: GRPO +1.0 pts |');
    expect(lines[4]).toContain('| ? generic: metric missing: reward_mean |');
  });
});
