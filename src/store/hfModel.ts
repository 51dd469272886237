// "Your own model": the Hugging Face model folder the visitor picked, as the page shows it. The
// worker holds the model (src/worker/hfSession.ts); this store holds what the page draws: the load
// in progress with its bytes, the opened model's summary or the refusal naming why, the folder
// kept in this browser for a reload, the sampling settings (seeded from generation_config.json)
// and the last sample with its tokens. The actions are the worker's replies and the user's edits;
// the commands that send anything are in hfFlows.ts.
import { create } from 'zustand';
import type { HfModelSummary, HfSample, WorkerToPage } from '../worker/protocol.ts';

/** The copy of a picked folder kept in this browser (hfKeep.ts), as the page offers it after a reload. */
export interface KeptHfFolder {
  label: string;
  files: number;
  bytes: number;
  savedAt: number;
}

export interface HfSampleSettings {
  prompt: string;
  /** Through the chat template as one user turn (only when the tokenizer has one). */
  chat: boolean;
  greedy: boolean;
  temperature: number;
  topP: number;
  maxNewTokens: number;
}

/** A setting out of its range: the field and the allowed range, for the message beside it. */
export interface SettingProblem {
  field: 'prompt' | 'temperature' | 'topP' | 'maxNewTokens';
  /** The allowed range as the message shows it. */
  range: string;
}

export interface HfState {
  /** The sub-panel is shown (the user chose "Your own model…", or a model is open or kept). */
  shown: boolean;
  /** The folder being opened, with the weights' bytes read so far; null when none. */
  loading: { label: string; doneBytes: number; totalBytes: number } | null;
  model: HfModelSummary | null;
  /** Why the last folder was refused (the worker's words: the file or field and what is supported). */
  problem: { label: string; message: string; lost?: boolean } | null;
  kept: KeptHfFolder | null;
  /** Why the picked folder could not be kept for a reload (the model itself opened). */
  keepProblem: string | null;
  settings: HfSampleSettings;
  generating: boolean;
  sample: HfSample | null;
  sampleProblem: string | null;
  /** The model lost with the GPU device, being opened again from this browser's copy on the new one (its label). */
  recovering: string | null;
  /** The model opened again after a lost device, and the iteration its adapter came back at (null: no adapter came back). */
  recovered: { label: string; iterations: number | null } | null;

  show(on: boolean): void;
  loadStarted(label: string): void;
  progressReceived(msg: Extract<WorkerToPage, { type: 'hfProgress' }>): void;
  /** The worker's `hfOpened`: the model (settings from its generation defaults), or the refusal with the model still held. */
  openReplied(label: string, msg: Extract<WorkerToPage, { type: 'hfOpened' }>): void;
  /** The open failed outside the model's checks (no worker, the worker went): nothing is known to be held. */
  openFailed(label: string, message: string): void;
  setKept(kept: KeptHfFolder | null, problem?: string | null): void;
  setSettings(patch: Partial<HfSampleSettings>): void;
  generateStarted(): void;
  generateReplied(msg: Extract<WorkerToPage, { type: 'hfGenerated' }>): void;
  generateFailed(message: string): void;
  /** The user forgot the model: nothing open, nothing kept. */
  forgotten(): void;
  /** The worker or its device went, and the model with it (the kept copy stays, to open again). */
  modelLost(): void;
  /** A new GPU device is ready: a model lost with the old one and kept in this browser is to be opened again (hfFlows.ts does). */
  deviceRecovered(): void;
  recoveryEnded(recovered: HfState['recovered']): void;
}

/** max new tokens when generation_config.json sets none (as `npm run generate`). */
export const DEFAULT_MAX_NEW_TOKENS = 32;
/** The most new tokens the page asks for at once: a sample to read, not a document. */
export const MAX_NEW_TOKENS_CAP = 1024;
export const MAX_TEMPERATURE = 10;

const BLANK_SETTINGS: HfSampleSettings = { prompt: '', chat: false, greedy: false, temperature: 1, topP: 1, maxNewTokens: DEFAULT_MAX_NEW_TOKENS };

/** The most new tokens this model allows in the page. */
export function maxNewTokensFor(model: HfModelSummary): number {
  return Math.max(1, Math.min(MAX_NEW_TOKENS_CAP, model.maxPositions - 1));
}

/** Settings for a freshly opened model: its generation defaults, the chat template on when it has one, the prompt kept. */
export function settingsFor(model: HfModelSummary, prompt: string): HfSampleSettings {
  const g = model.generation;
  return {
    prompt,
    chat: model.hasChatTemplate,
    greedy: !g.doSample,
    temperature: g.temperature,
    topP: g.topP,
    maxNewTokens: Math.min(g.maxNewTokens ?? DEFAULT_MAX_NEW_TOKENS, maxNewTokensFor(model)),
  };
}

/** Every setting out of range (empty when Generate can go). Sampling knobs are not checked for greedy decoding, which ignores them. */
export function settingProblems(s: HfSampleSettings, model: HfModelSummary): SettingProblem[] {
  const out: SettingProblem[] = [];
  if (s.prompt.trim() === '') out.push({ field: 'prompt', range: '' });
  if (!s.greedy && !(Number.isFinite(s.temperature) && s.temperature > 0 && s.temperature <= MAX_TEMPERATURE)) out.push({ field: 'temperature', range: `(0, ${MAX_TEMPERATURE}]` });
  if (!s.greedy && !(Number.isFinite(s.topP) && s.topP > 0 && s.topP <= 1)) out.push({ field: 'topP', range: '(0, 1]' });
  const maxNew = maxNewTokensFor(model);
  if (!(Number.isInteger(s.maxNewTokens) && s.maxNewTokens >= 1 && s.maxNewTokens <= maxNew)) out.push({ field: 'maxNewTokens', range: `1 … ${maxNew}` });
  return out;
}

export const createHfStore = () =>
  create<HfState>()((set, get) => ({
    shown: false,
    loading: null,
    model: null,
    problem: null,
    kept: null,
    keepProblem: null,
    settings: BLANK_SETTINGS,
    generating: false,
    sample: null,
    sampleProblem: null,
    recovering: null,
    recovered: null,

    show: (on) => set({ shown: on }),
    loadStarted: (label) => set({ shown: true, loading: { label, doneBytes: 0, totalBytes: 0 }, problem: null, keepProblem: null, recovered: null }),
    progressReceived: (msg) => {
      const l = get().loading;
      if (l) set({ loading: { ...l, doneBytes: msg.doneBytes, totalBytes: msg.totalBytes } });
    },
    openReplied: (label, msg) => {
      if (msg.refusal !== undefined || !msg.model) {
        const held = msg.model ?? null;
        set({ loading: null, problem: { label, message: msg.refusal ?? '' }, model: held, ...(held ? {} : { sample: null }) });
        return;
      }
      set({ loading: null, problem: null, model: msg.model, settings: settingsFor(msg.model, get().settings.prompt), sample: null, sampleProblem: null });
    },
    openFailed: (label, message) => set({ loading: null, problem: { label, message }, model: null, sample: null }),
    setKept: (kept, problem = null) => set({ kept, keepProblem: problem, ...(kept ? { shown: true } : {}) }),
    setSettings: (patch) => set({ settings: { ...get().settings, ...patch } }),
    generateStarted: () => set({ generating: true, sampleProblem: null }),
    generateReplied: (msg) => set({ generating: false, sample: msg.sample ?? get().sample, sampleProblem: msg.refusal ?? null }),
    generateFailed: (message) => set({ generating: false, sampleProblem: message }),
    modelLost: () => {
      const m = get().model;
      if (m) set({ model: null, sample: null, generating: false, recovered: null, problem: { label: m.label, message: '', lost: true } });
    },
    deviceRecovered: () => {
      const { problem, kept } = get();
      if (problem?.lost && kept?.label === problem.label) set({ recovering: problem.label });
    },
    recoveryEnded: (recovered) => set({ recovering: null, recovered }),
    forgotten: () => set({ model: null, kept: null, keepProblem: null, problem: null, sample: null, sampleProblem: null, loading: null, recovered: null }),
  }));

export const useHf = createHfStore();
