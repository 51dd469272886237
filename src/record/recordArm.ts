// Trains one arm of a preset in Node through the page's own worker code (TrainerHost, the real
// PpoTrainer, the shipped checkpoints of public/checkpoints) and records what the page would show
// (runRecorder.ts): every metric, the held-out evaluations on the page's schedule, the last batch,
// and the inspector's traces of the first and the last iteration. The trainer is the one
// `npm run learning` measures (src/cli/presetRun.ts): the same config and seed give the same
// training metrics, since a held-out evaluation draws from its own seed stream.
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hostBackend } from '../node/backend.ts';
import type { CheckedConfig } from '../rl/config.ts';
import { armConfig, presetArms, type Preset } from '../rl/presets.ts';
import { PpoTrainer } from '../rl/trainer.ts';
import type { BackendChoice, WorkerToPage } from '../worker/protocol.ts';
import { TrainerHost } from '../worker/trainerHost.ts';
import { RunRecorder } from './runRecorder.ts';

const CHECKPOINT_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'public', 'checkpoints');

export interface RecordArmOptions {
  preset: Preset;
  /** Index of the arm in presetArms(preset) (0 for a preset without arms). */
  arm: number;
  seed: number;
  backend: BackendChoice;
  /** Iterations to train (default the preset's budget). */
  iterations?: number;
  /** Called with every message the worker posts (progress). */
  onMessage?: (msg: WorkerToPage) => void;
}

export interface RecordedArm {
  label: string;
  config: CheckedConfig;
  recorder: RunRecorder;
  /** The run file's text. */
  text: string;
  seconds: number;
}

/** Trains the arm for its budget and returns its run file; rejects with the worker's words if the run pauses or fails. */
export async function recordArm(o: RecordArmOptions): Promise<RecordedArm> {
  const arms = presetArms(o.preset);
  const label = arms[o.arm]?.label;
  if (label === undefined) throw new Error(`preset "${o.preset.name}" has no arm ${o.arm} (it has ${arms.length})`);
  const config = armConfig(o.preset, o.arm, o.seed);
  const budget = o.iterations ?? o.preset.iterations;
  const recorder = new RunRecorder();
  let resolveEnd!: () => void;
  let rejectEnd!: (e: Error) => void;
  const ended = new Promise<void>((resolve, reject) => {
    resolveEnd = resolve;
    rejectEnd = reject;
  });
  let firstTraced = false;
  const host: TrainerHost = new TrainerHost({
    post: (msg) => {
      o.onMessage?.(msg);
      recorder.receive(msg);
      if (msg.type === 'trace' && !firstTraced) {
        // The first iteration is kept for the inspector; the last is captured by `captureLast`.
        firstTraced = true;
        void host.handle({ type: 'setCapture', on: false });
      }
      if (msg.type === 'finished') resolveEnd();
      if (msg.type === 'paused' || msg.type === 'error' || msg.type === 'deviceLost' || msg.type === 'deviceUnavailable')
        rejectEnd(new Error(`${o.preset.name} / ${label}: the worker stopped the run: ${'reason' in msg ? msg.reason : msg.message}`));
    },
    makeBackend: (choice, onLost) => hostBackend(choice, onLost),
    fetchCheckpoint: async (stem) => new Uint8Array(await readFile(join(CHECKPOINT_DIR, `${stem}.safetensors`))),
    createTrainer: (init) => PpoTrainer.create(init),
    tick: () => new Promise((r) => setImmediate(r)),
  });
  const t0 = performance.now();
  await host.handle({ type: 'init', backend: o.backend });
  await host.handle({ type: 'setConfig', config });
  await host.handle({ type: 'setCapture', on: true });
  await host.handle({ type: 'start', untilIter: budget, captureLast: true });
  await ended;
  const seconds = (performance.now() - t0) / 1000;
  const name = arms.length > 1 ? label : o.preset.name;
  const text = recorder.fileText({ name, config, preset: o.preset.name, budget, backend: o.backend });
  await host.handle({ type: 'reset' }).catch(() => undefined);
  return { label, config, recorder, text, seconds };
}
