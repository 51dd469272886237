// Which model trains, and whether the model knobs say the same: the page's pure rules for the
// "1 · SFT" stage. The actor is the SFT model the page trained or loaded for the task, else the
// shipped checkpoint (2 × 2 × 64); the knobs Layers / Heads / Width that differ from it are named
// before Start. Also the SFT time estimates and the checks on a kept SFT record.
import { t } from '../i18n/index.ts';
import { SFT_MODEL_DIMS } from '../model/config.ts';
import { KNOBS, NUMERIC_RULES, type PpoConfig } from '../rl/config.ts';
import type { ActorModel, ModelDims } from '../rl/sftRun.ts';
import { TASK_NAMES } from '../tasks/task.ts';

export const SHIPPED_DIMS: ModelDims = { ...SFT_MODEL_DIMS };
const DIM_KEYS = ['nLayer', 'nHead', 'dModel'] as const;

export type { ActorModel, ActorOrigin } from '../rl/sftRun.ts';

export function dimsOf(c: Pick<PpoConfig, 'nLayer' | 'nHead' | 'dModel'>): ModelDims {
  return { nLayer: c.nLayer, nHead: c.nHead, dModel: c.dModel };
}

export function sameDims(a: ModelDims, b: ModelDims): boolean {
  return DIM_KEYS.every((k) => a[k] === b[k]);
}

/** "4 × 4 × 128" (layers × heads × width). */
export function formatDims(d: ModelDims): string {
  return `${d.nLayer} × ${d.nHead} × ${d.dModel}`;
}

/** The header's words for the model that trains: "model 4 × 4 × 128, SFT in this tab" / "shipped 2 × 2 × 64". */
export function actorLabel(a: ActorModel): string {
  const origin = a.origin === 'shipped' ? 'shipped' : a.origin === 'tab' ? 'tab' : 'file';
  return t(`settings:model.${origin}`, { dims: formatDims(a.dims) });
}

/** The knobs (their page labels, in the page's language) whose value differs from the model that would train; empty when none. */
export function mismatchedKnobs(config: Pick<PpoConfig, 'nLayer' | 'nHead' | 'dModel'>, actor: ModelDims): { label: string; set: number; model: number }[] {
  return DIM_KEYS.filter((k) => config[k] !== actor[k]).map((k) => ({ label: t(`settings:knobs.${k}.label`), set: config[k], model: actor[k] }));
}

/** The sentence shown before Start when the knobs and the model disagree; null when they agree. */
export function mismatchMessage(config: Pick<PpoConfig, 'nLayer' | 'nHead' | 'dModel'>, actor: ActorModel): string | null {
  const off = mismatchedKnobs(config, actor.dims);
  if (off.length === 0) return null;
  const what = t(actor.origin === 'shipped' ? 'settings:model.whatShipped' : actor.origin === 'tab' ? 'settings:model.whatTab' : 'settings:model.whatFile');
  const knobs = off.map((k) => t('settings:model.mismatchKnob', k)).join(', ');
  return t('settings:model.mismatch', { what, dims: formatDims(actor.dims), knobs });
}

/** Seconds an SFT run of `totalSteps` takes at a measured `secondsPerStep`, rounded up to a whole second. */
export function sftSecondsEstimate(secondsPerStep: number, totalSteps: number): number {
  if (!(secondsPerStep > 0) || !(totalSteps > 0)) return 0;
  return Math.ceil(secondsPerStep * totalSteps);
}

/** Seconds left of a run at its pace so far; null before the first step is done. */
export function sftEtaSeconds(doneSteps: number, totalSteps: number, seconds: number): number | null {
  if (!(doneSteps > 0) || !(seconds >= 0) || totalSteps < doneSteps) return null;
  return (seconds / doneSteps) * (totalSteps - doneSteps);
}

/** "2 min 5 s" / "40 s", in the page's language. */
export function formatSeconds(s: number): string {
  const r = Math.max(0, Math.round(s));
  if (r < 60) return t('settings:model.seconds', { s: r });
  const m = Math.floor(r / 60);
  return r % 60 === 0 ? t('settings:model.minutes', { m }) : t('settings:model.minutesSeconds', { m, s: r % 60 });
}

/** Why `x` is not an SFT model's metadata (a kept record or one read back), or null when it is. */
export function sftMetaProblem(x: unknown): string | null {
  if (typeof x !== 'object' || x === null) return 'the SFT record has no metadata';
  const m = x as Record<string, unknown>;
  if (!TASK_NAMES.includes(m.task as (typeof TASK_NAMES)[number])) return `task = ${JSON.stringify(m.task)}: expected one of ${TASK_NAMES.join(', ')}`;
  for (const k of DIM_KEYS) {
    const r = NUMERIC_RULES[k]!;
    const v = m[k];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < r.min || v > r.max) return `${KNOBS[k].label} = ${JSON.stringify(v)}: expected an integer from ${r.min} to ${r.max}`;
  }
  for (const k of ['seed', 'steps'] as const) {
    const v = m[k];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) return `${k} = ${JSON.stringify(v)}: expected a non-negative integer`;
  }
  if (typeof m.backend !== 'string') return 'backend: expected the name of the backend it trained on';
  return null;
}
