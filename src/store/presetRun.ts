// Pure helpers for running presets from the page: which budget applies to the current settings,
// the configs of a paired preset's arms, and the speed / ETA readout. The trainer client drives
// the worker with them; unit tests cover them without a browser.
import { t } from '../i18n/index.ts';
import { checkConfig, type CheckedConfig, type PpoConfig } from '../rl/config.ts';
import { findPreset, presetArms, presetConfig, type Preset } from '../rl/presets.ts';
import type { ModelDims } from '../rl/sftRun.ts';

/** Largest iteration budget `?budget=` accepts. */
export const MAX_BUDGET = 10_000;

/** Whether every value the preset (or one of its arms) sets still holds in `config`. */
export function configMatchesPreset(config: PpoConfig, preset: Preset): boolean {
  return presetArms(preset).some((arm) => Object.entries(arm.values).every(([k, v]) => config[k as keyof PpoConfig] === v));
}

/**
 * The iteration budget that applies to a new run: the chosen preset's (or the link's `?budget=`
 * override), but only while the settings still are that preset's; null otherwise (no ETA, no stop).
 */
export function presetBudget(config: PpoConfig, presetName: string | null, override: number | null): number | null {
  const preset = presetName ? findPreset(presetName) : undefined;
  if (!preset || !configMatchesPreset(config, preset)) return null;
  return override ?? preset.iterations;
}

/** The model size of the SFT model the page keeps for `task`, if it keeps one (sftState.ts). */
export type KeptDims = (task: string) => ModelDims | undefined;

/**
 * The whole config of arm `arm` of `preset` (presetConfig: every knob it does not name at its
 * default), except the model size, which follows the task's kept SFT model: the weights a run
 * trains are the page's, not the recipe's.
 */
export function presetRecipe(preset: Preset, arm = 0, keptDims?: KeptDims): PpoConfig {
  const config = presetConfig(preset, arm);
  const dims = keptDims?.(config.task);
  return dims ? { ...config, ...dims } : config;
}

export type ArmPlan = { ok: true; arms: { label: string; config: CheckedConfig }[] } | { ok: false; problems: string[] };

/** The whole config of each arm of `preset` (presetRecipe), each checked. */
export function planArms(preset: Preset, keptDims?: KeptDims): ArmPlan {
  const arms: { label: string; config: CheckedConfig }[] = [];
  const problems: string[] = [];
  for (const [i, a] of presetArms(preset).entries()) {
    const r = checkConfig(presetRecipe(preset, i, keptDims));
    if (r.config) arms.push({ label: a.label, config: r.config });
    else problems.push(...r.problems.map((p) => `${a.label}: ${p.message}`));
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, arms };
}

/** Iterations per second over message arrival times (ms), oldest first; null with fewer than two. */
export function speedFrom(stampsMs: readonly number[]): number | null {
  if (stampsMs.length < 2) return null;
  const span = stampsMs[stampsMs.length - 1] - stampsMs[0];
  return span > 0 ? ((stampsMs.length - 1) * 1000) / span : null;
}

/** "—" without a speed or budget, else the time to finish the budget, e.g. "2 min 05 s". */
export function formatEta(done: number, budget: number | null, itPerSec: number | null): string {
  if (budget === null || itPerSec === null || !(itPerSec > 0)) return '—';
  const left = Math.max(0, budget - done);
  if (left === 0) return t('common:progress.done');
  const s = Math.round(left / itPerSec);
  if (s < 60) return t('common:progress.seconds', { s });
  const m = Math.floor(s / 60);
  if (m < 60) return t('common:progress.minutes', { m, s: String(s % 60).padStart(2, '0') });
  return t('common:progress.hours', { h: Math.floor(m / 60), m: String(m % 60).padStart(2, '0') });
}

/** "0.21 it/s", "3.4 it/s", "12 it/s"; "—" when unknown. */
export function formatSpeed(itPerSec: number | null): string {
  if (itPerSec === null || !Number.isFinite(itPerSec)) return '—';
  return t('common:progress.speed', { value: itPerSec >= 10 ? itPerSec.toFixed(0) : itPerSec >= 1 ? itPerSec.toFixed(1) : itPerSec.toPrecision(2) });
}
