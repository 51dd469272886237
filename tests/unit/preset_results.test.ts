// Every card's recorded run ships with the page (public/runs/presets/, `npm run record-runs`): one
// file per arm at the path "Show the result" opens, read by the page's own reader (every check of
// a run file applies), trained with the card's whole recipe and seed 1 for the card's budget, with
// the evaluations of the page's schedule, its last batch and the inspected first and last
// iterations; the cards' files together stay small enough to precache for offline use. The two
// "Your own model" presets' runs of the shipped chat model are there too, with their adapters.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { armConfig, PRESETS, presetArms } from '../../src/rl/presets.ts';
import { useApp } from '../../src/store/appStore.ts';
import { comparisonOf } from '../../src/store/comparisons.ts';
import { useInspection } from '../../src/store/inspection.ts';
import { hfPresetRunPath, PRESET_RUNS_DIR, presetRunPath, presetRunPaths, showPresetResult } from '../../src/store/presetResults.ts';
import { HF_PRESETS } from '../../src/rl/hf/hfPresets.ts';
import { HF_TRAIN_EVAL_COUNT } from '../../src/rl/hf/hfTrainSettings.ts';
import { SHIPPED_CHAT_MODEL } from '../../src/model/hf/shippedModel.ts';
import { readHfRunFile } from '../../src/store/hfRunFile.ts';
import { HfFlows } from '../../src/store/hfFlows.ts';
import { useHfTrain } from '../../src/store/hfTrain.ts';
import { createHfStore } from '../../src/store/hfModel.ts';
import { readRunFile } from '../../src/store/runFile.ts';
import { restoreRecordedRuns } from '../../src/store/runFiles.ts';
import { evalDue } from '../../src/worker/evalSchedule.ts';
import { installMemoryIndexedDb } from '../helpers/memoryIndexedDb.ts';
import { ROOT } from '../helpers/sourceFiles.ts';

const PUBLIC = join(ROOT, 'public');
/**
 * The most the cards' files may weigh together: they are precached with the page (vite.config.ts).
 * The two own-model presets' are 3.0 MB each of the 8.5 MiB: 120 iterations, every token's
 * numbers (by column: hfRunRows.ts), the last iteration's trace and the adapter with its float64
 * training state.
 */
const MAX_TOTAL_BYTES = 9 * 1024 * 1024;

describe('the cards’ recorded runs', () => {
  it('name one file per arm under runs/presets/, distinct, with the arm number only for a paired card', () => {
    const paths = PRESETS.flatMap(presetRunPaths);
    expect(new Set(paths).size).toBe(paths.length);
    for (const p of PRESETS) {
      const arms = presetArms(p);
      for (const [i] of arms.entries()) expect(presetRunPath(p, i)).toBe(`${PRESET_RUNS_DIR}/${p.id}${arms.length > 1 ? `-${i + 1}` : ''}.json`);
    }
  });

  it('ship nothing but the cards’ files, within the precache budget', () => {
    const dir = join(PUBLIC, PRESET_RUNS_DIR);
    const shipped = readdirSync(dir).map((f) => `${PRESET_RUNS_DIR}/${f}`);
    expect(shipped.sort()).toEqual([...PRESETS.flatMap(presetRunPaths), ...HF_PRESETS.map(hfPresetRunPath)].sort());
    const total = shipped.reduce((sum, f) => sum + statSync(join(PUBLIC, f)).size, 0);
    expect(total).toBeLessThanOrEqual(MAX_TOTAL_BYTES);
  });

  for (const preset of PRESETS)
    for (const [arm, { label }] of presetArms(preset).entries())
      it(`${preset.name} / ${label}: the card's recipe with seed 1, its budget, evaluations, batch and inspected iterations`, () => {
        const rec = readRunFile(readFileSync(join(PUBLIC, presetRunPath(preset, arm)), 'utf8'));
        const budget = preset.iterations;
        expect(rec.run.config).toEqual(armConfig(preset, arm, 1));
        expect(rec.run.name).toBe(presetArms(preset).length > 1 ? label : preset.name);
        expect(rec.run).toMatchObject({ preset: preset.name, budget, backend: 'cpu' });
        expect(rec.run.metrics.map((p) => p.iter)).toEqual(Array.from({ length: budget }, (_, i) => i));
        const every = rec.run.config.evalEvery;
        const evalIters = every > 0 ? Array.from({ length: budget + 1 }, (_, i) => i).filter((i) => evalDue(i, every) || i === budget) : [];
        expect(rec.run.evals?.map((e) => e.iter)).toEqual(evalIters);
        expect(rec.batch?.samples?.iter).toBe(budget - 1);
        expect(rec.batch?.ratios?.iter).toBe(budget - 1);
        expect(rec.traces.map((t) => t.trace.iter)).toEqual([0, budget - 1]);
        expect(rec.state).toBeNull();
      });
});

describe('the “Your own model” presets’ recorded runs', () => {
  const config = JSON.parse(readFileSync(join(PUBLIC, SHIPPED_CHAT_MODEL.path, 'config.json'), 'utf8'));
  for (const preset of HF_PRESETS)
    it(`${preset.name}: the preset's settings on the shipped chat model, every iteration, both evaluations, the adapter with its state, the last iteration's trace`, () => {
      const run = readHfRunFile(readFileSync(join(PUBLIC, hfPresetRunPath(preset)), 'utf8'));
      expect(run.settings).toEqual(preset.settings);
      expect(run.model).toEqual({
        label: SHIPPED_CHAT_MODEL.label,
        architecture: config.architectures[0],
        nLayer: config.num_hidden_layers,
        dModel: config.hidden_size,
        vocab: config.vocab_size,
      });
      expect(run.rows.map((r) => r.iter)).toEqual(Array.from({ length: preset.settings.iterations }, (_, i) => i + 1));
      expect(run.iterations).toBe(preset.settings.iterations);
      for (const r of run.rows) expect(r.responses).toHaveLength(preset.settings.promptsPerBatch * preset.settings.samplesPerPrompt);
      expect(run.rows.every((r) => (r.value_loss === null) === (preset.settings.estimator === 'group_norm'))).toBe(true);
      expect(run.evals.map((e) => [e.when, e.count])).toEqual([
        ['before', HF_TRAIN_EVAL_COUNT],
        ['after', HF_TRAIN_EVAL_COUNT],
      ]);
      expect(JSON.parse(run.adapter.config)).toMatchObject({ peft_type: 'LORA', r: preset.settings.loraRank });
      expect(run.adapter.state).toBeDefined();
      // the last iteration for the Inspect tab: its knobs the preset's, its tokens and numbers the last row's
      const t = run.lastTrace!.trace;
      expect([t.iter, t.B, t.knobs.advantageEstimator, t.minibatches.length]).toEqual([
        preset.settings.iterations,
        preset.settings.promptsPerBatch * preset.settings.samplesPerPrompt,
        preset.settings.estimator,
        preset.settings.ppoEpochs * preset.settings.miniBatches,
      ]);
      for (const [b, x] of run.rows.at(-1)!.responses.entries())
        for (const [j, tok] of x.tokens.entries()) {
          const at = b * t.A + j;
          expect([t.responseTokens[at], t.oldLogprobs[at], t.refLogprobs[at], t.stored.advantages[at]]).toEqual([tok.id, tok.old, tok.ref, tok.advantage]);
        }
      // which responses ended with EOS: those whose last token is one of generation_config.json's EOS ids
      const eos: number[] = JSON.parse(readFileSync(join(PUBLIC, SHIPPED_CHAT_MODEL.path, 'generation_config.json'), 'utf8')).eos_token_id;
      const ended = Array.from({ length: t.B }, (_, b) => {
        let n = 0;
        while (n < t.A && t.actionMask[b * t.A + n] > 0) n++;
        return n > 0 && eos.includes(t.responseTokens[b * t.A + n - 1]);
      });
      expect(run.lastTrace!.endedWithEos).toEqual(ended);
      expect(ended.some(Boolean)).toBe(true);
    });

  it('open from “Show the result” as a picked file would: shown as recorded without a model', async () => {
    const served = vi.fn(async (path: string) => new Response(readFileSync(join(PUBLIC, path))));
    vi.stubGlobal('fetch', served);
    try {
      const flows = new HfFlows({
        store: createHfStore(),
        train: useHfTrain,
        rewardFunction: () => '',
        download: () => undefined,
        adapterKeep: { save: async () => undefined, read: async () => null, forget: async () => undefined },
        connection: () => {
          throw new Error('nothing is sent to the worker without a model');
        },
        playgroundModel: async () => {
          throw new Error('no playground model is asked for');
        },
        keep: { save: async () => ({ label: '', files: 0, bytes: 0, savedAt: 0 }), read: async () => null, files: async () => [], forget: async () => undefined },
        seed: () => 1,
      });
      await flows.openServedRunFile(hfPresetRunPath(HF_PRESETS[0]));
      expect(served).toHaveBeenCalledWith('runs/presets/own-model-grpo.json', { credentials: 'same-origin' });
      expect(useHfTrain.getState().recorded).toMatchObject({ fileName: 'own-model-grpo.json', run: { settings: HF_PRESETS[0].settings } });
      expect(useHfTrain.getState().runFileNotice).toBeNull();
    } finally {
      useHfTrain.getState().recordedClosed();
      vi.unstubAllGlobals();
    }
  });
});

/** The iterations of `runId` the inspector holds. */
const tracedIters = (runId: string) =>
  useInspection
    .getState()
    .traces.filter((t) => t.runId === runId)
    .map((t) => t.trace.iter);

describe('Show the result', () => {
  let uninstall: () => void;
  beforeEach(() => {
    uninstall = installMemoryIndexedDb().uninstall;
    useApp.setState({ runs: [], batches: {}, activeRunId: null, viewRunId: null, notice: null, comparison: 0 });
    useInspection.setState({ traces: [], hacked: null });
    // The page's own site: public/ as the built page serves it.
    vi.stubGlobal('fetch', async (path: string) => {
      try {
        return new Response(readFileSync(join(PUBLIC, path)));
      } catch {
        return new Response('', { status: 404 });
      }
    });
  });
  afterEach(() => {
    vi.unstubAllGlobals();
    uninstall();
  });

  it('puts a paired card’s arms on the charts as a comparison of their own; shown again, the same runs come back', async () => {
    const mine = useApp.getState().beginRun({ name: 'my run' });
    const { runs, message } = await showPresetResult('Tight vs loose clipping');
    expect(runs.map((r) => [r.name, r.recorded?.file])).toEqual([
      ['ε = 0.05', 'runs/presets/clipping-1.json'],
      ['ε = 0.5', 'runs/presets/clipping-2.json'],
    ]);
    expect(message).toMatch(/^The recorded runs of “Tight vs loose clipping” are on the charts: ε = 0.05 and ε = 0.5, 60 iterations each, seed 1, recorded /);
    const s = useApp.getState();
    expect(s.notice).toEqual({ tone: 'info', text: message });
    expect(s.runs.filter((r) => r.visible).map((r) => r.name)).toEqual(['ε = 0.05', 'ε = 0.5']);
    expect(comparisonOf(s.runs.find((r) => r.id === mine.id)!)).not.toBe(comparisonOf(runs[0]));
    expect(tracedIters(runs[1].id)).toEqual([0, 59]);

    await showPresetResult('DAPO');
    expect(
      useApp
        .getState()
        .runs.filter((r) => r.visible)
        .map((r) => r.name),
    ).toEqual(['DAPO']);
    const again = await showPresetResult('Tight vs loose clipping');
    expect(again.runs.map((r) => r.id)).toEqual(runs.map((r) => r.id));
    expect(useApp.getState().runs).toHaveLength(4);
    expect(useApp.getState().comparison).toBe(comparisonOf(runs[0]));
    expect(
      useApp
        .getState()
        .runs.filter((r) => r.visible)
        .map((r) => r.name),
    ).toEqual(['ε = 0.05', 'ε = 0.5']);
  });

  it('offers the reward-hacking card’s hacked response, as a live run of it does', async () => {
    const { runs } = await showPresetResult('Reward hacking without KL');
    const hacked = useInspection.getState().hacked;
    expect(hacked).toMatchObject({ runId: runs[0].id, iter: 19 });
    expect(runs[0].config.klCoef).toBe(0);
    // After a reload the run's inspected iterations come back, not the offer (a live run's is not kept either).
    useInspection.setState({ traces: [], hacked: null });
    await restoreRecordedRuns();
    expect(tracedIters(runs[0].id)).toEqual([0, 19]);
    expect(useInspection.getState().hacked).toBeNull();
  });

  it('names a missing file and keeps the arms that opened', async () => {
    vi.stubGlobal('fetch', async (path: string) => (path.endsWith('-2.json') ? new Response('', { status: 404 }) : new Response(readFileSync(join(PUBLIC, path)))));
    const { runs, message } = await showPresetResult('PPO vs GRPO');
    expect(runs.map((r) => r.name)).toEqual(['PPO (GAE)']);
    expect(message).toBe('“runs/presets/ppoVsGrpo-2.json” not opened: the page could not load it from its own site (HTTP 404). The runs on the page are untouched.');
    expect(useApp.getState().notice?.tone).toBe('error');
  });
});
