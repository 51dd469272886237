// The settings: the backend to train on, the config (checked where it enters: a field, a preset, a link, a saved sequence,
// a trainer state; typed CheckedConfig after, never checked again), the classroom's hidden knobs,
// the chosen preset and its budget override, and the written reward function's state.
import type { StateCreator } from 'zustand';
import { checkConfig, DEFAULT_CHECKED, unknownSetting, type CheckedConfig, type ConfigProblem, type PpoConfig } from '../../rl/config.ts';
import { findPreset } from '../../rl/presets.ts';
import type { BackendChoice, RewardFunctionReport, WorkerToPage } from '../../worker/protocol.ts';
import { presetRecipe } from '../presetRun.ts';
import type { RewardCheck } from '../rewardFunctionLink.ts';
import { keptModelDims } from '../sftState.ts';

/** The settings a link carries (urlConfig.ts parses and checks them). */
export interface LinkSettings {
  config: CheckedConfig;
  hidden: readonly (keyof PpoConfig)[];
  budgetOverride: number | null;
  pendingRewardFunction: string | null;
}

/** Two configs with every knob the same (knob values are numbers, strings, booleans or null). */
function sameConfig(a: CheckedConfig, b: CheckedConfig): boolean {
  const keys = Object.keys(a) as (keyof CheckedConfig)[];
  return keys.length === Object.keys(b).length && keys.every((k) => Object.is(a[k], b[k]));
}

function sameKeys(a: ReadonlySet<keyof PpoConfig>, b: readonly (keyof PpoConfig)[]): boolean {
  const bs = new Set(b);
  return a.size === bs.size && [...bs].every((k) => a.has(k));
}

export interface ConfigSlice {
  /** The backend the user chose for training; 'cpu' after the no-WebGPU fallback button. */
  backend: BackendChoice;
  /** Only ever holds a config that passed validation where it entered. */
  config: CheckedConfig;
  /** Settings hidden by the classroom option `?hide=`. */
  hidden: ReadonlySet<keyof PpoConfig>;
  /** The preset last chosen (its budget applies while the config still matches it). */
  preset: string | null;
  /** `?budget=N` in the link: every preset's iteration budget becomes N (short classroom demos, tests). */
  budgetOverride: number | null;
  /** A reward function from the link, shown until the visitor accepts it (then it enters the config) or keeps their own. */
  pendingRewardFunction: string | null;
  /** The worker's check of the written reward function last sent. */
  rewardCheck: RewardCheck | null;
  /** The written reward function refused a sample during training (the run paused); cleared by an edit. */
  rewardFailure: (RewardFunctionReport & { source: string }) | null;

  setBackend(b: BackendChoice): void;
  /** Checks a whole config (a field, a preset, a file's sizes) and applies it; its problems (and no change) otherwise. */
  applyConfig(next: PpoConfig): ConfigProblem[];
  /** Applies one field if the resulting config is valid. */
  setField<K extends keyof PpoConfig>(key: K, value: PpoConfig[K]): ConfigProblem[];
  /** A config checked where it entered (a link, a saved sequence, a trainer state) becomes the settings. */
  takeCheckedConfig(config: CheckedConfig): void;
  /**
   * The preset called `name` (arm `arm`) becomes the settings, whole: every knob it does not name
   * back at its default (presetRecipe), and it becomes the chosen preset. Its problems otherwise.
   */
  choosePreset(name: string, arm?: number): ConfigProblem[];
  /**
   * What the page's link says, read once as the page opens: one update with only what differs from
   * the settings, so a link that changes nothing re-renders nothing.
   */
  applyLink(link: LinkSettings): void;
  setPreset(name: string | null): void;
  setBudgetOverride(n: number | null): void;
  setPendingRewardFunction(source: string | null): void;
  /** "Run this reward function": the link's function enters the config. */
  acceptRewardFunction(): ConfigProblem[];
  setRewardCheck(c: RewardCheck | null): void;
  setRewardFailure(f: ConfigSlice['rewardFailure']): void;
  /** The worker's `rewardFunctionChecked`: its check of the function it was sent. */
  rewardFunctionChecked(msg: Extract<WorkerToPage, { type: 'rewardFunctionChecked' }>): void;
}

export const configSlice: StateCreator<ConfigSlice, [], [], ConfigSlice> = (set, get) => ({
  backend: 'webgpu',
  config: DEFAULT_CHECKED,
  hidden: new Set(),
  preset: null,
  budgetOverride: null,
  pendingRewardFunction: null,
  rewardCheck: null,
  rewardFailure: null,

  setBackend: (backend) => set({ backend }),
  applyConfig(next) {
    const { config, problems } = checkConfig(next);
    if (config) set({ config });
    return problems;
  },
  setField(key, value) {
    return get().applyConfig({ ...get().config, [key]: value });
  },
  takeCheckedConfig: (config) => set({ config }),
  choosePreset(name, arm = 0) {
    const preset = findPreset(name);
    if (!preset) return [unknownSetting('preset', name)];
    const problems = get().applyConfig(presetRecipe(preset, arm, keptModelDims));
    if (problems.length === 0) set({ preset: name });
    return problems;
  },
  applyLink(link) {
    const s = get();
    const next: Partial<ConfigSlice> = {};
    if (!sameConfig(s.config, link.config)) next.config = link.config;
    if (!sameKeys(s.hidden, link.hidden)) next.hidden = new Set(link.hidden);
    if (s.budgetOverride !== link.budgetOverride) next.budgetOverride = link.budgetOverride;
    if (s.pendingRewardFunction !== link.pendingRewardFunction) next.pendingRewardFunction = link.pendingRewardFunction;
    if (Object.keys(next).length > 0) set(next);
  },
  setPreset: (preset) => set({ preset }),
  setBudgetOverride: (budgetOverride) => set({ budgetOverride }),
  setPendingRewardFunction: (pendingRewardFunction) => set({ pendingRewardFunction }),
  acceptRewardFunction() {
    const pending = get().pendingRewardFunction;
    if (pending === null) return [];
    const problems = get().setField('rewardFunction', pending);
    if (problems.length === 0) set({ pendingRewardFunction: null });
    return problems;
  },
  setRewardCheck: (rewardCheck) => set({ rewardCheck }),
  setRewardFailure: (rewardFailure) => set({ rewardFailure }),
  rewardFunctionChecked: (msg) => set({ rewardCheck: { source: msg.source, score: msg.score, problem: msg.problem } }),
});
