// A lighter default batch on adapters that offer only WebGPU's minimum buffer sizes (128 MiB per
// storage binding, 256 MiB per buffer): what phones, tablets and many integrated GPUs report. Such
// adapters are also the slowest the page meets, so a first iteration should not take minutes.
// Only the untouched default batch is lightened, before any run, and the page says so.
import { t } from '../i18n/index.ts';
import { checkConfig, DEFAULT_CONFIG, type CheckedConfig, type PpoConfig } from '../rl/config.ts';
import type { LimitRow } from '../worker/protocol.ts';
import { useApp } from './appStore.ts';

const MiB = 1024 * 1024;
/** WebGPU's defaults: an adapter at or under both offers nothing beyond what every adapter must. */
export const MINIMUM_BUFFERS = { maxStorageBufferBindingSize: 128 * MiB, maxBufferSize: 256 * MiB } as const;
/** The lighter batch: half the default prompts, the same samples per prompt (group estimators keep their groups). */
export const LIGHT_PROMPTS_PER_BATCH = DEFAULT_CONFIG.promptsPerBatch / 2;

export function offersMinimumBuffers(limits: readonly LimitRow[]): boolean {
  const offered = (name: keyof typeof MINIMUM_BUFFERS) => limits.find((l) => l.name === name)?.adapter;
  return (Object.keys(MINIMUM_BUFFERS) as (keyof typeof MINIMUM_BUFFERS)[]).every((name) => {
    const v = offered(name);
    return v !== undefined && Number.isFinite(v) && v <= MINIMUM_BUFFERS[name];
  });
}

export interface LighterBatch {
  config: CheckedConfig;
  from: number;
  to: number;
}

/** The lighter config for this adapter, or null: a larger adapter, or a batch someone already chose. */
export function lighterDefaultBatch(config: PpoConfig, limits: readonly LimitRow[]): LighterBatch | null {
  if (!offersMinimumBuffers(limits)) return null;
  if (config.promptsPerBatch !== DEFAULT_CONFIG.promptsPerBatch || config.samplesPerPrompt !== DEFAULT_CONFIG.samplesPerPrompt) return null;
  const next = checkConfig({ ...config, promptsPerBatch: LIGHT_PROMPTS_PER_BATCH }).config;
  return next ? { config: next, from: config.promptsPerBatch, to: LIGHT_PROMPTS_PER_BATCH } : null;
}

/** After the self-test: lightens the default batch for a minimum adapter, before any run, and says so. */
export function applyLighterBatch(limits: readonly LimitRow[]): boolean {
  const s = useApp.getState();
  if (s.runs.length > 0 || s.runState !== 'idle') return false;
  const light = lighterDefaultBatch(s.config, limits);
  if (!light) return false;
  s.takeCheckedConfig(light.config);
  s.setNotice({
    tone: 'info',
    text: t('notices:lighterBatch', {
      from: light.from,
      to: light.to,
      samples: light.config.samplesPerPrompt,
      group: t('settings:groups.rollout'),
      setting: t('settings:knobs.promptsPerBatch.label'),
    }),
  });
  return true;
}
