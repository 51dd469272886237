// The page's side of "Your own model": the HF store's actions (progress only while loading, the
// generation defaults seeding the settings, a refusal keeping the model the worker still holds,
// settings out of range named with their range) and the flows through the trainer client to a fake
// worker: the picked File objects go to the worker, the opened model is kept for a reload, the kept
// copy is offered and opened again, Generate sends the settings, Forget frees and deletes; a
// refusal or a worker's error lands as a message and the PPO run is untouched.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { topLevelFiles } from '../../src/store/hfFolderFiles.ts';
import { HfFlows } from '../../src/store/hfFlows.ts';
import { COMPARED_KEPT, createHfTrainStore, useHfTrain } from '../../src/store/hfTrain.ts';
import type { KeptAdapter, KeptAdapterRecord } from '../../src/store/hfAdapterKeep.ts';
import { zipSync } from 'fflate';
import { DEFAULT_HF_TRAIN, hfTrainProblems, upgradeHfTrainRow } from '../../src/rl/hf/hfTrainSettings.ts';
import { SHIPPED_CHAT_MODEL } from '../../src/model/hf/shippedModel.ts';
import { unzipSync } from 'fflate';
import { createHfStore, useHf, DEFAULT_MAX_NEW_TOKENS, type KeptHfFolder, settingProblems, settingsFor } from '../../src/store/hfModel.ts';
import type { HfSample } from '../../src/worker/protocol.ts';
import { clientHarness } from '../helpers/fakeTrainerWorker.ts';
import { hfRecordedRun, hfRunRow, tinyModelSummary } from '../helpers/hfRunFixture.ts';
import { HF_PRESETS } from '../../src/rl/hf/hfPresets.ts';
import { rng } from '../helpers/random.ts';
import { hfRunFileText, readHfRunFile } from '../../src/store/hfRunFile.ts';
import { runFileText } from '../../src/store/runFile.ts';
import { checked, DEFAULT_CONFIG } from '../../src/rl/config.ts';
import { formatBytes } from '../../src/model/hf/memoryPlan.ts';
import { readFileSync } from 'node:fs';
import { playgroundCheckpoint } from '../../src/store/playgroundModelFolder.ts';
import type { KeptSftModel } from '../../src/store/sftState.ts';
import type { IterationTrace } from '../../src/rl/inspect/trace.ts';
import { OWN_MODEL_RECORDED_ID, OWN_MODEL_RUN_ID, useInspection } from '../../src/store/inspection.ts';

const ARITHMETIC_CHECKPOINT = new Uint8Array(readFileSync(new URL('../../public/checkpoints/arithmetic.safetensors', import.meta.url)));

const MODEL = tinyModelSummary('tiny');
const SAMPLE: HfSample = {
  promptIds: [1, 2],
  promptText: 'hi',
  tokens: [{ id: 5, text: ' a', logprob: -0.5, special: false }],
  text: ' a',
  stopped: 'max_new_tokens',
  greedy: false,
  seconds: 0.1,
};

function fakeKeep() {
  let kept: { meta: KeptHfFolder; files: File[] } | null = null;
  const keep = {
    fail: null as Error | null,
    save: vi.fn(async (label: string, files: readonly File[]) => {
      if (keep.fail) throw keep.fail;
      kept = { meta: { label, files: files.length, bytes: files.reduce((n, f) => n + f.size, 0), savedAt: 1 }, files: [...files] };
      return kept.meta;
    }),
    read: vi.fn(async () => kept?.meta ?? null),
    files: vi.fn(async () => kept?.files ?? []),
    forget: vi.fn(async () => {
      kept = null;
    }),
  };
  return keep;
}

/** The adapter kept in this browser, in memory: shared by the "pages" of one test. */
function fakeAdapterKeep() {
  let kept: KeptAdapter | null = null;
  return {
    save: vi.fn(async (record: KeptAdapterRecord, config: string, weights: Uint8Array, state?: Uint8Array) => {
      kept = { record: structuredClone(record), config, weights: weights.slice(), ...(state ? { state: state.slice() } : {}) };
    }),
    read: vi.fn(async () => kept),
    forget: vi.fn(async () => {
      kept = null;
    }),
  };
}

// The trainer client routes the worker's rows to the page's one train store.
const trainDeps = (adapterKeep = fakeAdapterKeep()) => {
  useHfTrain.getState().modelChanged();
  useHfTrain.getState().clearCompared();
  useHfTrain.getState().recordedClosed();
  useHfTrain.getState().setRunFileNotice(null);
  useHfTrain.getState().setSettings(DEFAULT_HF_TRAIN);
  return {
    train: useHfTrain,
    rewardFunction: () => '(p, r) => r.length',
    download: vi.fn(),
    adapterKeep,
    playgroundModel: vi.fn(async () => ({ task: 'arithmetic', bytes: ARITHMETIC_CHECKPOINT })),
  };
};

function setup() {
  const h = clientHarness();
  const store = createHfStore();
  const keep = fakeKeep();
  const extra = trainDeps();
  const flows = new HfFlows({ store, connection: () => h.client.connection, keep, seed: () => 42, ...extra });
  return { h, store, keep, flows, train: extra.train, download: extra.download, adapterKeep: extra.adapterKeep };
}

const files = () => [new File(['{}'], 'config.json'), new File(['x'.repeat(10)], 'model.safetensors')];

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe('HF store', () => {
  it('settings come from the generation defaults, capped by the positions, the prompt kept', () => {
    expect(settingsFor(MODEL, 'q')).toEqual({ prompt: 'q', chat: true, greedy: false, temperature: 0.7, topP: 0.8, maxNewTokens: 127 });
    const plain = { ...MODEL, hasChatTemplate: false, generation: { ...MODEL.generation, doSample: false, maxNewTokens: null } };
    expect(settingsFor(plain, '')).toMatchObject({ chat: false, greedy: true, maxNewTokens: DEFAULT_MAX_NEW_TOKENS });
  });

  it('names each setting out of range with its range; greedy ignores temperature and top-p', () => {
    const ok = settingsFor(MODEL, 'q');
    expect(settingProblems(ok, MODEL)).toEqual([]);
    const bad = { ...ok, prompt: '  ', temperature: 0, topP: Number.NaN, maxNewTokens: 128 };
    expect(settingProblems(bad, MODEL)).toEqual([
      { field: 'prompt', range: '' },
      { field: 'temperature', range: '(0, 10]' },
      { field: 'topP', range: '(0, 1]' },
      { field: 'maxNewTokens', range: '1 … 127' },
    ]);
    expect(settingProblems({ ...bad, prompt: 'q', greedy: true, maxNewTokens: 1.5 }, MODEL).map((p) => p.field)).toEqual(['maxNewTokens']);
  });

  it('progress counts only while a folder loads; a refusal keeps the model the worker still holds', () => {
    const s = createHfStore();
    s.getState().progressReceived({ type: 'hfProgress', doneBytes: 1, totalBytes: 2 });
    expect(s.getState().loading).toBeNull();
    s.getState().loadStarted('a');
    s.getState().progressReceived({ type: 'hfProgress', doneBytes: 5, totalBytes: 10 });
    expect(s.getState().loading).toEqual({ label: 'a', doneBytes: 5, totalBytes: 10 });
    s.getState().openReplied('a', { type: 'hfOpened', model: MODEL });
    expect(s.getState()).toMatchObject({ loading: null, model: MODEL, problem: null });
    s.getState().generateReplied({ type: 'hfGenerated', sample: SAMPLE });
    s.getState().loadStarted('b');
    s.getState().openReplied('b', { type: 'hfOpened', refusal: 'config.json: T5 is not', model: MODEL });
    expect(s.getState()).toMatchObject({ loading: null, model: MODEL, sample: SAMPLE, problem: { label: 'b', message: 'config.json: T5 is not' } });
    s.getState().openReplied('c', { type: 'hfOpened', refusal: 'upload failed' });
    expect(s.getState()).toMatchObject({ model: null, sample: null });
  });

  it('keeps only the files directly inside the picked folder, named after it', () => {
    const f = (n: string) => new File([''], n);
    const picked = topLevelFiles(
      [
        { file: f('config.json'), path: 'SmolLM2/config.json' },
        { file: f('x.json'), path: 'SmolLM2/onnx/x.json' },
        { file: f('tokenizer.json'), path: 'SmolLM2/tokenizer.json' },
      ],
      'loose',
    );
    expect(picked.label).toBe('SmolLM2');
    expect(picked.files.map((x) => x.name)).toEqual(['config.json', 'tokenizer.json']);
    expect(topLevelFiles([{ file: f('a'), path: 'a' }], 'loose').label).toBe('loose');
  });
});

describe('HF flows through the trainer client', () => {
  it('sends the File objects, shows progress, keeps the opened folder, generates with the settings', async () => {
    const { h, store, keep, flows } = setup();
    const picked = { label: 'tiny', files: files() };
    const opening = flows.openPicked(picked);
    const sent = h.worker.of('hfOpen')[0];
    expect(sent.label).toBe('tiny');
    expect(sent.files).toEqual(picked.files);
    // The client hands progress to the page's store (this test's flows draw into their own).
    useHf.getState().loadStarted('tiny');
    h.worker.reply({ type: 'hfProgress', requestId: sent.requestId, doneBytes: 3, totalBytes: 10 });
    expect(useHf.getState().loading).toEqual({ label: 'tiny', doneBytes: 3, totalBytes: 10 });
    h.worker.reply({ type: 'hfOpened', requestId: sent.requestId, model: MODEL });
    await opening;
    expect(store.getState().model).toEqual(MODEL);
    expect(keep.save).toHaveBeenCalledWith('tiny', picked.files);
    expect(store.getState().kept).toMatchObject({ label: 'tiny', files: 2, bytes: 12 });

    store.getState().setSettings({ prompt: 'hello' });
    const gen = flows.generate();
    const g = h.worker.of('hfGenerate')[0];
    expect(g).toMatchObject({ prompt: 'hello', chat: true, greedy: false, temperature: 0.7, topP: 0.8, maxNewTokens: 127, seed: 42 });
    expect(store.getState().generating).toBe(true);
    h.worker.reply({ type: 'hfGenerated', requestId: g.requestId, sample: SAMPLE });
    await gen;
    expect(store.getState()).toMatchObject({ generating: false, sample: SAMPLE, sampleProblem: null });
    expect(h.store.getState().runs).toEqual([]);
  });

  it('the shipped chat model: its five files fetched from the page’s own base URL and opened as a picked folder; a file that does not come is named', async () => {
    const { h, store, keep, flows } = setup();
    const asked: string[] = [];
    vi.stubGlobal(
      'fetch',
      vi.fn(async (url: string) => {
        asked.push(url);
        return new Response(`bytes of ${url}`, { status: 200 });
      }),
    );
    try {
      const opening = flows.openShipped('/ppo/');
      await h.advance();
      const sent = h.worker.of('hfOpen')[0];
      expect(asked).toEqual(SHIPPED_CHAT_MODEL.files.map((f) => `/ppo/${SHIPPED_CHAT_MODEL.path}${f}`));
      expect(sent.label).toBe('chat-arithmetic');
      expect(sent.files.map((f: File) => f.name)).toEqual([...SHIPPED_CHAT_MODEL.files]);
      expect(await sent.files[2].text()).toBe(`bytes of /ppo/${SHIPPED_CHAT_MODEL.path}model.safetensors`);
      h.worker.reply({ type: 'hfOpened', requestId: sent.requestId, model: { ...MODEL, label: 'chat-arithmetic' } });
      await opening;
      expect(store.getState().model?.label).toBe('chat-arithmetic');
      expect(keep.save).toHaveBeenCalledWith('chat-arithmetic', sent.files);

      vi.stubGlobal(
        'fetch',
        vi.fn(async (url: string) => new Response('', { status: url.endsWith('tokenizer.json') ? 404 : 200 })),
      );
      await flows.openShipped('/');
      expect(h.worker.of('hfOpen')).toHaveLength(1); // nothing sent
      expect(store.getState().problem).toEqual({ label: 'chat-arithmetic', message: "the page's copy of tokenizer.json could not be fetched (HTTP 404)" });
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it('the playground’s character model: its checkpoint as a GPT-2 folder, opened and kept as a picked one; a checkpoint that does not come is named', async () => {
    const { h, store, keep, flows } = setup();
    const opening = flows.openPlaygroundModel('/');
    await h.advance();
    const sent = h.worker.of('hfOpen')[0];
    expect(sent.label).toBe('arithmetic-sft-gpt2');
    expect(sent.files.map((f: File) => f.name)).toEqual(['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json', 'generation_config.json']);
    expect(JSON.parse(await sent.files[0].text())).toMatchObject({ architectures: ['GPT2LMHeadModel'], n_layer: 2, n_head: 2, n_embd: 64 });
    h.worker.reply({ type: 'hfOpened', requestId: sent.requestId, model: { ...MODEL, label: 'arithmetic-sft-gpt2' } });
    await opening;
    expect(store.getState().model?.label).toBe('arithmetic-sft-gpt2');
    expect(keep.save).toHaveBeenCalledWith('arithmetic-sft-gpt2', sent.files);
    // the chat task needs a template this model has not: training is offered on its own task
    expect(useHfTrain.getState().settings.reward).toBe('arithmetic');

    const failing = setup();
    failing.flows = new HfFlows({
      store: failing.store,
      connection: () => failing.h.client.connection,
      keep: failing.keep,
      seed: () => 42,
      ...trainDeps(),
      playgroundModel: async () => ({ task: 'arithmetic', bytes: ARITHMETIC_CHECKPOINT.subarray(0, 100) }),
    });
    await failing.flows.openPlaygroundModel('/');
    // refused on the page (no worker was asked), with the safetensors reader's own words
    expect(() => failing.h.worker).toThrow('no worker was started');
    expect(failing.store.getState().model).toBeNull();
    expect(failing.store.getState().problem).toEqual({ label: "the playground's model", message: expect.stringMatching(/safetensors|header|bytes/) });
  });

  it('the playground’s checkpoint: 1 · SFT’s kept model first, else the page’s own copy, whose absence is named', async () => {
    const kept = { task: 'arithmetic', bytes: ARITHMETIC_CHECKPOINT.slice().buffer } as KeptSftModel;
    const asked: string[] = [];
    vi.stubGlobal(
      'fetch',
      vi.fn(async (url: string) => {
        asked.push(url);
        return url.includes('stop') ? new Response('', { status: 404 }) : new Response(ARITHMETIC_CHECKPOINT.slice());
      }),
    );
    try {
      expect(await playgroundCheckpoint('/ppo/', 'arithmetic', kept)).toEqual(ARITHMETIC_CHECKPOINT);
      expect(asked).toEqual([]);
      expect(await playgroundCheckpoint('/ppo/', 'sentiment', undefined)).toEqual(ARITHMETIC_CHECKPOINT);
      expect(asked).toEqual(['/ppo/checkpoints/sentiment.safetensors']);
      await expect(playgroundCheckpoint('/', 'stop', undefined)).rejects.toThrow("the page's copy of checkpoints/stop.safetensors could not be fetched (HTTP 404)");
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it('a row an earlier version kept (its first response only) reads as today’s row', () => {
    const old = { iter: 3, reward_mean: 0.5, kl: 0, response_length_mean: 2, policy_loss: 0, clipfrac: 0, value_loss: null, seconds: 1 };
    const token = { id: 7, text: '4', old: -1, ref: -1, logprob: -0.9, advantage: 0.5, clip: null };
    expect(upgradeHfTrainRow({ ...old, sample: { prompt: 'p', response: '4', score: 1 }, tokens: [token] })).toEqual({
      ...old,
      responses: [{ prompt: 'p', response: '4', score: 1, tokens: [token] }],
    });
    const today = { ...old, responses: [] };
    expect(upgradeHfTrainRow(today)).toBe(today);
  });

  it('a refused folder is not kept; its message names the folder; the worker error of a request is a message too', async () => {
    const { h, store, keep, flows } = setup();
    const opening = flows.openPicked({ label: 't5-small', files: files() });
    h.worker.reply({ type: 'hfOpened', requestId: h.worker.idOf('hfOpen'), refusal: 'config.json: T5ForConditionalGeneration is an encoder-decoder' });
    await opening;
    expect(keep.save).not.toHaveBeenCalled();
    expect(store.getState().problem).toEqual({ label: 't5-small', message: 'config.json: T5ForConditionalGeneration is an encoder-decoder' });

    const again = flows.openPicked({ label: 'x', files: files() });
    h.worker.reply({ type: 'error', requestId: h.worker.idOf('hfOpen'), message: 'the trainer is not initialised yet' });
    await again;
    expect(store.getState()).toMatchObject({ loading: null, model: null, problem: { label: 'x', message: 'the trainer is not initialised yet' } });
  });

  it('a folder that cannot be kept still opens, saying why it is not kept', async () => {
    const { h, store, keep, flows } = setup();
    keep.fail = new Error('QuotaExceededError');
    const opening = flows.openPicked({ label: 'big', files: files() });
    h.worker.reply({ type: 'hfOpened', requestId: h.worker.idOf('hfOpen'), model: MODEL });
    await opening;
    expect(store.getState()).toMatchObject({ model: MODEL, kept: null, keepProblem: 'QuotaExceededError' });
  });

  it('after a reload the kept folder is offered (once), opened again from its copy, and forgotten', async () => {
    const first = setup();
    const opening = first.flows.openPicked({ label: 'tiny', files: files() });
    first.h.worker.reply({ type: 'hfOpened', requestId: first.h.worker.idOf('hfOpen'), model: MODEL });
    await opening;

    // A new page: a fresh store and client over the same kept copy.
    const h = clientHarness();
    const store = createHfStore();
    const flows = new HfFlows({ store, connection: () => h.client.connection, keep: first.keep, seed: () => 1, ...trainDeps() });
    await flows.restore();
    await flows.restore();
    expect(first.keep.read).toHaveBeenCalledTimes(1);
    expect(store.getState()).toMatchObject({ shown: true, model: null, kept: { label: 'tiny', files: 2 } });
    const reopening = flows.openKept();
    await h.advance();
    const sent = h.worker.of('hfOpen')[0];
    expect(sent.files.map((f) => f.name)).toEqual(['config.json', 'model.safetensors']);
    h.worker.reply({ type: 'hfOpened', requestId: sent.requestId, model: MODEL });
    await reopening;
    expect(store.getState().model).toEqual(MODEL);

    await flows.forget();
    expect(h.worker.of('hfClose')).toHaveLength(1);
    expect(first.keep.forget).toHaveBeenCalled();
    expect(store.getState()).toMatchObject({ model: null, kept: null });
    expect(await first.keep.read()).toBeNull();
  });

  it('the model goes with the worker or its device: the page says so and offers to open it again', () => {
    const h = clientHarness();
    h.client.warmUp();
    useHf.getState().openReplied('tiny', { type: 'hfOpened', model: MODEL });
    h.worker.reply({ type: 'deviceLost', reason: 'test', iter: null });
    expect(useHf.getState()).toMatchObject({ model: null, problem: { label: 'tiny', lost: true } });
    useHf.getState().openReplied('tiny', { type: 'hfOpened', model: MODEL });
    h.client.connection.drop();
    expect(useHf.getState().model).toBeNull();
  });

  it('Generate is not sent with a setting out of range or without a model', async () => {
    const { h, store, flows } = setup();
    await flows.generate();
    store.getState().openReplied('tiny', { type: 'hfOpened', model: MODEL });
    store.getState().setSettings({ prompt: 'q', topP: 2 });
    await flows.generate();
    expect(h.workers.flatMap((w) => w.of('hfGenerate'))).toEqual([]);
  });

  it('Train sends the settings and the reward function; rows and evaluations fill the store; Stop is sent at once; the adapter downloads as a zip of PEFT files', async () => {
    const { h, store, flows, train, download } = setup();
    const opening = flows.openPicked({ label: 'tiny qwen', files: files() });
    h.worker.reply({ type: 'hfOpened', requestId: h.worker.idOf('hfOpen'), model: { ...MODEL, label: 'tiny qwen' } });
    await opening;
    train.getState().setSettings({ iterations: 3, loraRank: 4 });
    const running = flows.train();
    const req = h.worker.of('hfTrain')[0];
    expect(req).toMatchObject({ settings: { ...DEFAULT_HF_TRAIN, iterations: 3, loraRank: 4 }, rewardFunction: '(p, r) => r.length' });
    expect(train.getState().running).toBe(true);
    const row = {
      iter: 1,
      reward_mean: 0.5,
      kl: 0,
      response_length_mean: 4,
      policy_loss: 0.1,
      clipfrac: 0,
      value_loss: null,
      seconds: 1,
      responses: [{ prompt: 'p', response: 'r', score: 1, tokens: [] }],
    };
    h.worker.reply({ type: 'hfTrainEval', requestId: req.requestId, eval: { when: 'before', greedyAccuracy: 0.25, count: 16 } });
    h.worker.reply({ type: 'hfTrainRow', requestId: req.requestId, row });
    expect(train.getState()).toMatchObject({ rows: [row], evals: [{ when: 'before', greedyAccuracy: 0.25 }] });
    flows.stopTraining();
    expect(h.worker.of('hfTrainStop')).toHaveLength(1);
    expect(train.getState().stopping).toBe(true);
    h.worker.reply({ type: 'hfTrained', requestId: req.requestId, iterations: 1, stopped: true });
    await h.advance();
    // the trained adapter is kept in this browser for a reload
    h.worker.reply({ type: 'hfAdapter', requestId: h.worker.idOf('hfExportAdapter'), config: '{"r":4}', weights: new Uint8Array([9]) });
    await running;
    expect(train.getState()).toMatchObject({ running: false, stopping: false, ended: { iterations: 1, stopped: true }, problem: null, trained: true });

    const downloading = flows.downloadAdapter();
    await h.advance();
    const weights = new Uint8Array([1, 2, 3]);
    h.worker.reply({ type: 'hfAdapter', requestId: h.worker.idOf('hfExportAdapter'), config: '{"peft_type":"LORA"}', weights });
    await downloading;
    expect(download).toHaveBeenCalledTimes(1);
    const [blob, name] = download.mock.calls[0] as [Blob, string];
    expect(name).toBe('tiny-qwen-lora.zip');
    const unzipped = unzipSync(new Uint8Array(await blob.arrayBuffer()));
    expect(Object.keys(unzipped).sort()).toEqual(['tiny-qwen-lora/adapter_config.json', 'tiny-qwen-lora/adapter_model.safetensors']);
    expect(Array.from(unzipped['tiny-qwen-lora/adapter_model.safetensors'])).toEqual([1, 2, 3]);
    expect(h.store.getState().runs).toEqual([]); // the PPO run is untouched

    // Forget drops the adapter with the model
    await flows.forget();
    expect(train.getState()).toMatchObject({ trained: false, rows: [] });
    expect(store.getState().model).toBeNull();
  });

  it('settings out of range are named with their range, and Train sends nothing then; a refusal lands as the problem', async () => {
    const { h, flows, train } = setup();
    const opening = flows.openPicked({ label: 'tiny', files: files() });
    h.worker.reply({ type: 'hfOpened', requestId: h.worker.idOf('hfOpen'), model: MODEL });
    await opening;
    const model = { maxPositions: 128, hasChatTemplate: true };
    expect(hfTrainProblems(DEFAULT_HF_TRAIN, model)).toEqual([]);
    const fields = (s: typeof DEFAULT_HF_TRAIN, m = model) => hfTrainProblems(s, m).map(({ field, range, rule, params }) => ({ field, range, rule, params }));
    expect(fields({ ...DEFAULT_HF_TRAIN, loraRank: 0, lr: Number.NaN })).toEqual([
      { field: 'loraRank', range: 'an integer from 1 to 64', rule: 'integer', params: { min: 1, max: 64 } },
      { field: 'lr', range: 'a number from 1e-7 to 0.1', rule: 'number', params: { min: 1e-7, max: 0.1 } },
    ]);
    expect(fields({ ...DEFAULT_HF_TRAIN, loraRank: 2.5 })[0]).toMatchObject({ field: 'loraRank', rule: 'integer' });
    expect(fields({ ...DEFAULT_HF_TRAIN, samplesPerPrompt: 1 })).toEqual([
      { field: 'samplesPerPrompt', range: 'at least 2: GRPO compares the samples of one prompt', rule: 'groupSamples', params: {} },
    ]);
    expect(fields({ ...DEFAULT_HF_TRAIN, samplesPerPrompt: 1, estimator: 'gae' })).toEqual([]);
    expect(fields({ ...DEFAULT_HF_TRAIN, reward: 'function', prompts: ' \n ' })).toEqual([{ field: 'prompts', range: 'one prompt a line', rule: 'prompts', params: {} }]);
    expect(fields(DEFAULT_HF_TRAIN, { ...model, hasChatTemplate: false })).toEqual([
      { field: 'chat', range: "a chat template in the model's tokenizer_config.json", rule: 'chatTemplate', params: {} },
    ]);
    // a playground task's prompts never go through a template, whatever the chat box says; a reward function's do when it is ticked
    for (const reward of ['arithmetic', 'sentiment', 'stop'] as const)
      expect(fields({ ...DEFAULT_HF_TRAIN, reward, chat: true }, { ...model, hasChatTemplate: false })).toEqual([]);
    expect(fields({ ...DEFAULT_HF_TRAIN, reward: 'function', prompts: 'hi', chat: true }, { ...model, hasChatTemplate: false }).map((p) => p.rule)).toEqual(['chatTemplate']);
    expect(fields({ ...DEFAULT_HF_TRAIN, reward: 'function', prompts: 'hi', chat: false }, { ...model, hasChatTemplate: false })).toEqual([]);
    expect(fields({ ...DEFAULT_HF_TRAIN, maxNewTokens: 128 })).toEqual([
      { field: 'maxNewTokens', range: "below the model's 128 positions", rule: 'belowPositions', params: { positions: 128 } },
    ]);
    train.getState().setSettings({ loraRank: 0 });
    await flows.train();
    expect(h.worker.of('hfTrain')).toHaveLength(0);
    train.getState().setSettings({ loraRank: 8 });
    const running = flows.train();
    h.worker.reply({ type: 'hfTrained', requestId: h.worker.idOf('hfTrain'), iterations: 0, stopped: false, refusal: 'reward function: SyntaxError' });
    await running;
    expect(train.getState()).toMatchObject({ running: false, problem: 'reward function: SyntaxError', trained: false });
  });

  it('a reload offers the kept adapter of the same model; Continue puts it back with its rows and trains on from its last iteration; a picked zip loads', async () => {
    const first = setup();
    const opening = first.flows.openPicked({ label: 'tiny', files: files() });
    first.h.worker.reply({ type: 'hfOpened', requestId: first.h.worker.idOf('hfOpen'), model: MODEL });
    await opening;
    const row = (iter: number) => ({
      iter,
      reward_mean: 0.5,
      kl: 0,
      response_length_mean: 4,
      policy_loss: 0,
      clipfrac: 0,
      value_loss: null,
      seconds: 1,
      responses: [{ prompt: 'p', response: 'r', score: 1, tokens: [] }],
    });
    const running = first.flows.train();
    const id = first.h.worker.idOf('hfTrain');
    first.h.worker.reply({ type: 'hfTrainRow', requestId: id, row: row(1) });
    first.h.worker.reply({ type: 'hfTrainRow', requestId: id, row: row(2) });
    first.h.worker.reply({ type: 'hfTrained', requestId: id, iterations: 2, stopped: false });
    await first.h.advance();
    expect(first.h.worker.of('hfExportAdapter')[0].trainingState).toBe(true);
    first.h.worker.reply({
      type: 'hfAdapter',
      requestId: first.h.worker.idOf('hfExportAdapter'),
      config: '{"r":8}',
      weights: new Uint8Array([1, 2]),
      state: new Uint8Array([9]),
    });
    await running;
    expect(useHfTrain.getState().adapter).toEqual({ source: 'trained', info: null, withMoments: true });
    expect(first.adapterKeep.save).toHaveBeenCalledTimes(1);
    expect(first.adapterKeep.save.mock.calls[0][0]).toMatchObject({ label: 'tiny', iterations: 2, rows: [row(1), row(2)] });

    // A new page over the same browser storage: the model opened again offers its adapter.
    const h = clientHarness();
    const store = createHfStore();
    const extra = trainDeps(first.adapterKeep);
    const flows = new HfFlows({ store, connection: () => h.client.connection, keep: first.keep, seed: () => 1, ...extra });
    const reopening = flows.openPicked({ label: 'tiny', files: files() });
    h.worker.reply({ type: 'hfOpened', requestId: h.worker.idOf('hfOpen'), model: MODEL });
    await reopening;
    expect(useHfTrain.getState().keptOffer).toEqual({ label: 'tiny', iterations: 2 });
    const continuing = flows.continueKept();
    await h.advance();
    const load = h.worker.of('hfLoadAdapter')[0];
    expect(load.config).toBe('{"r":8}');
    expect(Array.from(load.weights)).toEqual([1, 2]);
    expect(Array.from(load.state ?? [])).toEqual([9]); // the run's training state comes back with it
    h.worker.reply({ type: 'hfAdapterLoaded', requestId: load.requestId, adapter: { r: 8, alpha: 16, rslora: false, targets: ['q_proj'] } });
    await continuing;
    expect(useHfTrain.getState()).toMatchObject({ trained: true, adapter: { source: 'kept', withMoments: true }, iterationsDone: 2, keptOffer: null, rows: [row(1), row(2)] });
    const resumed = flows.train(true);
    const req = h.worker.of('hfTrain')[0];
    expect(req.resume).toEqual({ fromIter: 2 });
    h.worker.reply({ type: 'hfTrainRow', requestId: req.requestId, row: row(3) });
    h.worker.reply({ type: 'hfTrained', requestId: req.requestId, iterations: 1, stopped: false });
    await h.advance();
    h.worker.reply({ type: 'hfAdapter', requestId: h.worker.idOf('hfExportAdapter'), config: '{"r":8}', weights: new Uint8Array([3]) });
    await resumed;
    expect(useHfTrain.getState()).toMatchObject({ iterationsDone: 3, rows: [row(1), row(2), row(3)] });

    // a picked zip (the page's own download) loads; a zip without the weights is refused by name
    const zip = zipSync({ 'tiny-lora/adapter_config.json': new TextEncoder().encode('{"r":2}'), 'tiny-lora/adapter_model.safetensors': new Uint8Array([7]) });
    const picking = flows.loadAdapterFiles([new File([zip], 'tiny-lora.zip')]);
    await h.advance();
    const picked = h.worker.of('hfLoadAdapter')[1];
    expect(picked.config).toBe('{"r":2}');
    h.worker.reply({ type: 'hfAdapterLoaded', requestId: picked.requestId, refusal: 'adapter_config.json: peft_type is undefined' });
    await picking;
    expect(useHfTrain.getState().loadProblem).toBe('adapter_config.json: peft_type is undefined');
    await flows.loadAdapterFiles([new File([zipSync({ 'a/adapter_config.json': new Uint8Array([123, 125]) })], 'a.zip')]);
    expect(useHfTrain.getState().loadProblem).toBe('adapter_model.safetensors is missing: pick the adapter’s zip, or both of its files'.replace('’', "'"));
    expect(h.worker.of('hfLoadAdapter')).toHaveLength(2);
    // a good zip: PEFT's files only, so Continue starts fresh moments and critic
    const good = flows.loadAdapterFiles([new File([zip], 'tiny-lora.zip')]);
    await h.advance();
    const third = h.worker.of('hfLoadAdapter')[2];
    expect(third.state).toBeUndefined();
    h.worker.reply({ type: 'hfAdapterLoaded', requestId: third.requestId, adapter: { r: 2, alpha: 4, rslora: false, targets: ['q_proj'] } });
    await good;
    expect(useHfTrain.getState().adapter).toEqual({ source: 'loaded', info: { r: 2, alpha: 4, rslora: false, targets: ['q_proj'] }, withMoments: false });
  });
});

describe('the held-out evaluations of a run', () => {
  it('a continued run’s evaluation after training replaces the last one; “before” stays the first run’s', () => {
    const tr = createHfTrainStore();
    const evalOf = (when: 'before' | 'after', greedyAccuracy: number) => ({
      type: 'hfTrainEval' as const,
      eval: { when, greedyAccuracy, sampled: { accuracy: greedyAccuracy / 2, samples: 8 }, count: 16 },
    });
    tr.getState().started(false, 'tiny');
    tr.getState().evalReceived(evalOf('before', 0.25));
    tr.getState().evalReceived(evalOf('after', 0.5));
    tr.getState().started(true, 'tiny');
    tr.getState().evalReceived(evalOf('after', 0.75));
    expect(tr.getState().evals).toEqual([evalOf('before', 0.25).eval, evalOf('after', 0.75).eval]);
    tr.getState().started(false, 'tiny');
    expect(tr.getState().evals).toEqual([]);
  });
});

describe('a run of your own model through a lost GPU device', () => {
  it('its checkpoints are kept with their rows; after the loss the model opens again from its copy with the last one, and Continue goes on from there', async () => {
    const h = clientHarness();
    h.client.warmUp();
    useHf.getState().forgotten();
    const keep = fakeKeep();
    const extra = trainDeps();
    const flows = new HfFlows({ store: useHf, connection: () => h.client.connection, keep, seed: () => 1, ...extra });
    const opening = flows.openPicked({ label: 'tiny', files: files() });
    h.worker.reply({ type: 'hfOpened', requestId: h.worker.idOf('hfOpen'), model: MODEL });
    await opening;
    const r = rng(8120);
    const rows = [1, 2, 3].map((iter) => hfRunRow(r, iter));
    const running = flows.train();
    const id = h.worker.idOf('hfTrain');
    const checkpoint = (iter: number) => ({
      type: 'hfTrainCheckpoint' as const,
      requestId: id,
      iter,
      config: `{"r":${iter}}`,
      weights: new Uint8Array([iter]),
      state: new Uint8Array([10 + iter]),
    });
    // each row comes with its iteration's trace for the inspector, kept with its checkpoint
    const trace = (iter: number) => ({
      type: 'hfTrace' as const,
      requestId: id,
      trace: { iter, B: 1, A: 1 } as IterationTrace,
      prompts: ['p'],
      tokenText: ['t'],
      endedWithEos: [true],
    });
    const ownTraces = () => useInspection.getState().traces.flatMap((c) => (c.runId === OWN_MODEL_RUN_ID ? [[c.model, c.trace.iter]] : []));
    h.worker.reply({ type: 'hfTrainRow', requestId: id, row: rows[0] });
    h.worker.reply(trace(1));
    h.worker.reply(checkpoint(1));
    h.worker.reply({ type: 'hfTrainRow', requestId: id, row: rows[1] });
    h.worker.reply(trace(2));
    h.worker.reply(checkpoint(2));
    await h.advance();
    // kept one after the other, each with the rows up to its iteration; the store lets the bytes go
    expect(extra.adapterKeep.save.mock.calls.map((c) => [c[0].iterations, c[0].rows.map((r) => r.iter), c[0].lastTrace?.trace.iter, c[1]])).toEqual([
      [1, [1], 1, '{"r":1}'],
      [2, [1, 2], 2, '{"r":2}'],
    ]);
    expect(useHfTrain.getState().checkpoint).toBeNull();

    // The device goes during iteration 3: the model and the run's rows with it, the run ends refused.
    h.worker.reply({ type: 'hfTrainRow', requestId: id, row: rows[2] });
    h.worker.reply(trace(3));
    expect(ownTraces()).toEqual([
      ['tiny', 1],
      ['tiny', 2],
      ['tiny', 3],
    ]);
    h.worker.reply({ type: 'deviceLost', reason: 'test', iter: null });
    expect(useHf.getState()).toMatchObject({ model: null, problem: { label: 'tiny', lost: true }, recovered: null });
    h.worker.reply({ type: 'hfTrained', requestId: id, iterations: 2, stopped: false, refusal: 'the device was lost' });
    await running;
    expect(h.worker.of('hfExportAdapter')).toEqual([]); // nothing to export from a lost device
    expect(useHfTrain.getState()).toMatchObject({ trained: false, rows: [], running: false });

    // A new device: the kept copy opens on it, the last checkpoint goes back on with its rows.
    h.worker.reply({ type: 'deviceRecovered', adapter: 'test adapter', fromIter: 0, lostAt: null, replayed: 0, resumed: false });
    expect(useHf.getState().recovering).toBe('tiny');
    await h.advance();
    expect(h.worker.of('hfOpen')).toHaveLength(2);
    h.worker.reply({ type: 'hfOpened', requestId: h.worker.idOf('hfOpen'), model: MODEL });
    await h.advance();
    const load = h.worker.of('hfLoadAdapter')[0];
    expect([load.config, Array.from(load.weights), Array.from(load.state ?? [])]).toEqual(['{"r":2}', [2], [12]]);
    h.worker.reply({ type: 'hfAdapterLoaded', requestId: load.requestId, adapter: { r: 2, alpha: 4, rslora: false, targets: ['q_proj'] } });
    await h.advance();
    expect(useHf.getState()).toMatchObject({ model: { label: 'tiny' }, problem: null, recovering: null, recovered: { label: 'tiny', iterations: 2 } });
    expect(useHfTrain.getState()).toMatchObject({ trained: true, adapter: { source: 'kept', withMoments: true }, iterationsDone: 2 });
    expect(useHfTrain.getState().rows.map((r) => r.iter)).toEqual([1, 2]);
    // the inspector keeps the traces up to the checkpoint: iteration 3 comes again
    expect(ownTraces()).toEqual([
      ['tiny', 1],
      ['tiny', 2],
    ]);
    const resumed = flows.train(true);
    expect(h.worker.of('hfTrain').at(-1)!.resume).toEqual({ fromIter: 2 });
    expect(ownTraces()).toHaveLength(2); // a continued run keeps them
    h.worker.reply({ type: 'hfTrained', requestId: h.worker.idOf('hfTrain'), iterations: 0, stopped: true });
    await resumed;
    const fresh = flows.train();
    expect(ownTraces()).toEqual([]); // a fresh run's iterations count from 1 again
    h.worker.reply({ type: 'hfTrained', requestId: h.worker.idOf('hfTrain'), iterations: 0, stopped: true });
    await fresh;
  });

  it('a Run both the loss cut short comes back with its checkpoint and is offered to go on: the arm to its end, then the next', async () => {
    const h = clientHarness();
    h.client.warmUp();
    useHf.getState().forgotten();
    const extra = trainDeps();
    const flows = new HfFlows({ store: useHf, connection: () => h.client.connection, keep: fakeKeep(), seed: () => 1, ...extra });
    const opening = flows.openPicked({ label: 'tiny', files: files() });
    h.worker.reply({ type: 'hfOpened', requestId: h.worker.idOf('hfOpen'), model: MODEL });
    await opening;
    const row = (iter: number) => hfRunRow(rng(700 + iter), iter, 1);
    const arms = HF_PRESETS.map((p) => ({ ...p.settings, iterations: 3 }));
    const both = flows.trainBoth(arms);
    const id = h.worker.idOf('hfTrain');
    h.worker.reply({ type: 'hfTrainRow', requestId: id, row: row(1) });
    h.worker.reply({ type: 'hfTrainCheckpoint', requestId: id, iter: 1, config: '{"r":8}', weights: new Uint8Array([1]), state: new Uint8Array([1]) });
    await h.advance();
    h.worker.reply({ type: 'deviceLost', reason: 'test', iter: null });
    h.worker.reply({ type: 'hfTrained', requestId: id, iterations: 1, stopped: false, refusal: 'the device was lost' });
    await both;
    expect(useHfTrain.getState().runBoth).toBeNull(); // the sequence ended with the device
    h.worker.reply({ type: 'deviceRecovered', adapter: 'test adapter', fromIter: 0, lostAt: null, replayed: 0, resumed: false });
    await h.advance();
    h.worker.reply({ type: 'hfOpened', requestId: h.worker.idOf('hfOpen'), model: MODEL });
    await h.advance();
    h.worker.reply({ type: 'hfAdapterLoaded', requestId: h.worker.idOf('hfLoadAdapter'), adapter: { r: 8, alpha: 16, rslora: false, targets: ['q_proj'] } });
    await h.advance();
    expect(useHfTrain.getState()).toMatchObject({ trained: true, iterationsDone: 1, keptOffer: { label: 'tiny', iterations: 1, runBoth: { arm: 0, arms: 2, iterations: 2 } } });
    const going = flows.continueRunBoth();
    await h.advance();
    h.worker.reply({ type: 'hfAdapterLoaded', requestId: h.worker.idOf('hfLoadAdapter'), adapter: { r: 8, alpha: 16, rslora: false, targets: ['q_proj'] } });
    await h.advance();
    expect(
      h.worker
        .of('hfTrain')
        .slice(1)
        .map((m) => [m.settings.iterations, m.resume]),
    ).toEqual([[2, { fromIter: 1 }]]);
    h.worker.reply({ type: 'hfTrained', requestId: h.worker.idOf('hfTrain'), iterations: 0, stopped: true });
    await h.advance();
    await going;
    expect(h.worker.of('hfTrain')).toHaveLength(2); // stopped: the next arm never starts
  });

  it('a model lost with its device and not kept in this browser is not opened again: the page asks for it', async () => {
    const h = clientHarness();
    h.client.warmUp();
    useHf.getState().forgotten();
    const keep = fakeKeep();
    keep.fail = new Error('quota');
    const flows = new HfFlows({ store: useHf, connection: () => h.client.connection, keep, seed: () => 1, ...trainDeps() });
    const opening = flows.openPicked({ label: 'tiny', files: files() });
    h.worker.reply({ type: 'hfOpened', requestId: h.worker.idOf('hfOpen'), model: MODEL });
    await opening;
    h.worker.reply({ type: 'deviceLost', reason: 'test', iter: null });
    h.worker.reply({ type: 'deviceRecovered', adapter: 'test adapter', fromIter: 0, lostAt: null, replayed: 0, resumed: false });
    await h.advance();
    expect(useHf.getState()).toMatchObject({ model: null, recovering: null, problem: { label: 'tiny', lost: true } });
    expect(h.worker.of('hfOpen')).toHaveLength(1);
  });
});

describe('a saved run of your own model', () => {
  /** A file the visitor picks. */
  const asFile = (name: string, text: string) => ({ name, size: text.length, text: async () => text });

  it('Save the run writes the model, settings, rows, evaluations and the adapter with its state; opened on a fresh page it is shown as recorded until its model opens, then put back and continued', async () => {
    const first = setup();
    const opening = first.flows.openPicked({ label: 'tiny qwen', files: files() });
    first.h.worker.reply({ type: 'hfOpened', requestId: first.h.worker.idOf('hfOpen'), model: { ...MODEL, label: 'tiny qwen' } });
    await opening;
    const r = rng(31);
    const recorded = hfRecordedRun(r, 2);
    first.train.getState().setSettings(recorded.settings);
    const running = first.flows.train();
    const id = first.h.worker.idOf('hfTrain');
    first.h.worker.reply({ type: 'hfTrainEval', requestId: id, eval: recorded.evals[0] });
    for (const row of recorded.rows) first.h.worker.reply({ type: 'hfTrainRow', requestId: id, row });
    first.h.worker.reply({ type: 'hfTrace', requestId: id, endedWithEos: [], ...recorded.lastTrace! }); // the last iteration's trace goes in the file
    first.h.worker.reply({ type: 'hfTrainEval', requestId: id, eval: recorded.evals[1] });
    first.h.worker.reply({ type: 'hfTrained', requestId: id, iterations: 2, stopped: false });
    await first.h.advance();
    first.h.worker.reply({ type: 'hfAdapter', requestId: first.h.worker.idOf('hfExportAdapter'), config: recorded.adapter.config, weights: recorded.adapter.weights.slice() });
    await running;

    const saving = first.flows.saveRun();
    await first.h.advance();
    const exported = first.h.worker.of('hfExportAdapter');
    expect(exported.at(-1)?.trainingState).toBe(true);
    first.h.worker.reply({
      type: 'hfAdapter',
      requestId: exported.at(-1)!.requestId,
      config: recorded.adapter.config,
      weights: recorded.adapter.weights.slice(),
      state: recorded.adapter.state!.slice(),
    });
    await saving;
    const [blob, fileName] = first.download.mock.calls.at(-1) as [Blob, string];
    expect(fileName).toBe('tiny-qwen-run-2.json');
    const text = await blob.text();
    const saved = readHfRunFile(text);
    expect({ ...saved, savedAt: recorded.savedAt }).toEqual(recorded);
    expect(first.train.getState().runFileNotice).toEqual({ tone: 'info', text: expect.stringContaining(`Saved the run as tiny-qwen-run-2.json (${formatBytes(blob.size)})`) });

    // A fresh page, no model open: the run is shown as recorded.
    const h = clientHarness();
    const store = createHfStore();
    const extra = trainDeps();
    const flows = new HfFlows({ store, connection: () => h.client.connection, keep: fakeKeep(), seed: () => 1, ...extra });
    await flows.openRunFile(asFile(fileName, text));
    expect(useHfTrain.getState().recorded).toMatchObject({ fileName, savedAt: saved.savedAt, run: saved });
    expect(useHfTrain.getState()).toMatchObject({ rows: [], trained: false });
    // Its last iteration opens in the inspector from the file alone, on the response asked for.
    useInspection.setState({ traces: [], focus: null });
    flows.inspectRecorded(3);
    const shownTrace = () => useInspection.getState().traces.find((c) => c.runId === OWN_MODEL_RECORDED_ID);
    expect(shownTrace()).toMatchObject({ model: 'tiny qwen', file: fileName, prompts: recorded.lastTrace!.prompts, tokenText: recorded.lastTrace!.tokenText });
    expect(Array.from(shownTrace()!.trace.oldLogprobs)).toEqual(Array.from(recorded.lastTrace!.trace.oldLogprobs));
    expect(useInspection.getState().focus).toMatchObject({ runId: OWN_MODEL_RECORDED_ID, iter: 2, row: 3 });
    const ownTrace = () => useInspection.getState().traces.find((c) => c.runId === OWN_MODEL_RUN_ID);
    expect(ownTrace()).toBeUndefined(); // shown as recorded, not as the live run's

    // Another model opened: the run stays recorded, its adapter off that model.
    const other = flows.openPicked({ label: 'other', files: files() });
    h.worker.reply({ type: 'hfOpened', requestId: h.worker.idOf('hfOpen'), model: { ...MODEL, label: 'other' } });
    await other;
    expect(h.worker.of('hfLoadAdapter')).toHaveLength(0);
    expect(useHfTrain.getState().recorded?.fileName).toBe(fileName);

    // Its model opened: the adapter and its training state go on it; the rows are the panel's.
    const own = flows.openPicked({ label: 'tiny qwen', files: files() });
    h.worker.reply({ type: 'hfOpened', requestId: h.worker.idOf('hfOpen'), model: { ...MODEL, label: 'tiny qwen' } });
    await h.advance();
    const load = h.worker.of('hfLoadAdapter')[0];
    expect(load.config).toBe(recorded.adapter.config);
    expect(Array.from(load.weights)).toEqual(Array.from(recorded.adapter.weights));
    expect(Array.from(load.state ?? [])).toEqual(Array.from(recorded.adapter.state!));
    h.worker.reply({ type: 'hfAdapterLoaded', requestId: load.requestId, adapter: { r: 2, alpha: 4, rslora: false, targets: ['q_proj'] } });
    await own;
    expect(useHfTrain.getState()).toMatchObject({
      trained: true,
      adapter: { source: 'recorded', withMoments: true, file: { fileName, savedAt: saved.savedAt } },
      iterationsDone: 2,
      rows: recorded.rows,
      evals: recorded.evals,
      settings: recorded.settings,
      recorded: null,
      runFileNotice: { tone: 'info' },
    });
    expect(ownTrace()?.trace.iter).toBe(2); // put on the model, the run's last iteration stays in the inspector
    const resumed = flows.train(true);
    expect(h.worker.of('hfTrain')[0].resume).toEqual({ fromIter: 2 });
    h.worker.reply({ type: 'hfTrained', requestId: h.worker.idOf('hfTrain'), iterations: 0, stopped: true });
    await resumed;
  });

  it('a damaged or foreign file is refused naming the field, the model, its adapter and rows untouched; a good one does not replace the adapter the model holds unasked', async () => {
    const { h, flows, train } = setup();
    const opening = flows.openPicked({ label: 'tiny qwen', files: files() });
    h.worker.reply({ type: 'hfOpened', requestId: h.worker.idOf('hfOpen'), model: { ...MODEL, label: 'tiny qwen' } });
    await opening;
    const rows = [hfRunRow(rng(32), 1)];
    train.setState({ rows, trained: true });
    const text = hfRunFileText(hfRecordedRun(rng(33)));
    const doc = JSON.parse(text);
    doc.rows[1].responses.score[0] = null;
    await flows.openRunFile(asFile('class.json', JSON.stringify(doc)));
    expect(train.getState().runFileNotice).toEqual({
      tone: 'error',
      text: '“class.json” not opened: it is damaged at rows[1].responses.score[0] (rows[1].responses.score[0]: expected a finite number, found null). The model and its adapter are untouched.',
    });
    await flows.openRunFile(
      asFile('arith.json', runFileText({ id: 'r', name: 'r', color: '#000', visible: true, config: checked(DEFAULT_CONFIG), backend: 'cpu', createdAt: 0, metrics: [] }, null, [])),
    );
    expect(train.getState().runFileNotice?.text).toBe(
      '“arith.json” not opened: it is a playground run: open it with the charts’ “Open run…”. The model and its adapter are untouched.',
    );
    expect(train.getState()).toMatchObject({ rows, trained: true, recorded: null });
    expect(h.worker.of('hfLoadAdapter')).toHaveLength(0);

    // While the model trains nothing is opened, and the panel says why.
    const good = hfRecordedRun(rng(34));
    train.setState({ running: true });
    await flows.openRunFile(asFile('good.json', hfRunFileText(good)));
    expect(train.getState()).toMatchObject({ recorded: null, runFileNotice: { tone: 'error', text: '“good.json” not opened: the model is training; open it once the run ends.' } });
    train.setState({ running: false });
    // A good file of this model while it holds an adapter: shown as recorded, put on only when asked.
    await flows.openRunFile(asFile('good.json', hfRunFileText(good)));
    expect(h.worker.of('hfLoadAdapter')).toHaveLength(0);
    expect(train.getState()).toMatchObject({ rows, trained: true, recorded: { fileName: 'good.json' } });
    const putting = flows.putRecordedAdapter();
    await h.advance();
    const load = h.worker.of('hfLoadAdapter')[0];
    expect(Array.from(load.state ?? [])).toEqual(Array.from(good.adapter.state!));
    h.worker.reply({ type: 'hfAdapterLoaded', requestId: load.requestId, adapter: { r: 2, alpha: 4, rslora: false, targets: ['q_proj'] } });
    await putting;
    expect(train.getState()).toMatchObject({ rows: good.rows, iterationsDone: 3, recorded: null, adapter: { source: 'recorded', file: { fileName: 'good.json' } } });
  });
});

describe('earlier runs beside the current one, and Run both', () => {
  const row = (iter: number) => hfRunRow(rng(900 + iter), iter, 1);

  it('a fresh run moves the rows it replaces to the comparison with their model and settings; Continue does not; the newest COMPARED_KEPT stay; another model or a lost device leaves them', () => {
    const tr = createHfTrainStore();
    const s = () => tr.getState();
    s().setSettings({ lr: 1e-3 });
    s().started(false, 'tiny');
    s().rowReceived({ type: 'hfTrainRow', row: row(1) });
    s().finished({ type: 'hfTrained', iterations: 1, stopped: false });
    s().setRunFileNotice({ tone: 'info', text: 'Opened run.json' });
    s().started(true, 'tiny'); // Continue: the same run goes on
    s().rowReceived({ type: 'hfTrainRow', row: row(2) });
    expect([s().compared, s().runFileNotice?.text]).toEqual([[], 'Opened run.json']);
    s().setSettings({ lr: 2e-3 });
    s().started(false, 'tiny');
    expect(s().runFileNotice).toBeNull(); // a fresh run's rows are no file's
    expect(s().compared).toEqual([{ model: 'tiny', settings: { ...DEFAULT_HF_TRAIN, lr: 1e-3 }, rows: [row(1), row(2)] }]);
    expect(s().runOf).toEqual({ model: 'tiny', settings: { ...DEFAULT_HF_TRAIN, lr: 2e-3 } });
    for (let i = 0; i < COMPARED_KEPT + 1; i++) {
      s().rowReceived({ type: 'hfTrainRow', row: row(10 + i) });
      s().started(false, 'tiny');
    }
    expect(s().compared.map((c) => c.rows[0].iter)).toEqual([11, 12, 13]);
    // a fresh run with no rows yet moves nothing
    s().started(false, 'tiny');
    expect(s().compared).toHaveLength(COMPARED_KEPT);
    s().modelChanged();
    expect([s().rows, s().runOf, s().compared.length]).toEqual([[], null, COMPARED_KEPT]);
    s().clearCompared();
    expect(s().compared).toEqual([]);
  });

  it('an adapter put on with its run (kept, recorded) moves the rows it replaces too, and names its own run', () => {
    const tr = createHfTrainStore();
    const s = () => tr.getState();
    s().started(false, 'tiny');
    s().rowReceived({ type: 'hfTrainRow', row: row(1) });
    const info = { r: 8, alpha: 16, rslora: false, targets: ['q_proj'] };
    const recorded = { iterations: 2, rows: [row(1), row(2)], evals: [], settings: { ...DEFAULT_HF_TRAIN, estimator: 'gae' as const } };
    s().adapterLoaded('tiny', info, 'recorded', recorded);
    expect(s().compared).toEqual([{ model: 'tiny', settings: DEFAULT_HF_TRAIN, rows: [row(1)] }]);
    expect(s().runOf).toEqual({ model: 'tiny', settings: recorded.settings });
    // a picked adapter comes with no run: nothing names its rows
    s().adapterLoaded('tiny', info, 'loaded');
    expect([s().runOf, s().compared.length]).toEqual([null, 2]);
  });

  it('Run both trains each arm fresh in turn, the first arm’s rows kept beside the second’s; Stop in an arm ends the sequence', async () => {
    const { h, flows, train } = setup();
    const opening = flows.openPicked({ label: 'tiny', files: files() });
    h.worker.reply({ type: 'hfOpened', requestId: h.worker.idOf('hfOpen'), model: MODEL });
    await opening;
    const arms = HF_PRESETS.map((p) => ({ ...p.settings, iterations: 1 }));
    const finishArm = async (iter: number, stopped = false) => {
      const id = h.worker.idOf('hfTrain');
      h.worker.reply({ type: 'hfTrainRow', requestId: id, row: row(iter) });
      h.worker.reply({ type: 'hfTrained', requestId: id, iterations: 1, stopped });
      await h.advance();
      h.worker.reply({ type: 'hfAdapter', requestId: h.worker.idOf('hfExportAdapter'), config: '{"r":8}', weights: new Uint8Array([iter]) });
      await h.advance();
    };
    const both = flows.trainBoth(arms);
    expect(train.getState().runBoth).toEqual({ arm: 0, arms: 2 });
    expect(h.worker.of('hfTrain').map((m) => m.settings)).toEqual([arms[0]]);
    await finishArm(1);
    expect(train.getState().runBoth).toEqual({ arm: 1, arms: 2 });
    expect(h.worker.of('hfTrain').map((m) => [m.settings, m.resume])).toEqual([
      [arms[0], undefined],
      [arms[1], undefined], // a fresh adapter, not Continue
    ]);
    expect(train.getState().compared).toEqual([{ model: 'tiny', settings: arms[0], rows: [row(1)] }]);
    await finishArm(2);
    await both;
    expect(train.getState()).toMatchObject({ runBoth: null, running: false, rows: [row(2)], runOf: { model: 'tiny', settings: arms[1] } });

    // Stop during the first arm: the second never starts
    const again = flows.trainBoth(arms);
    flows.stopTraining();
    await finishArm(3, true);
    await again;
    expect(h.worker.of('hfTrain')).toHaveLength(3);
    expect(train.getState().runBoth).toBeNull();
  });

  it('a Run both cut short by a reload goes on after it: its arm continued to that arm’s iterations, the next arm fresh, the earlier runs’ curves back; a stopped one is not offered', async () => {
    const first = setup();
    const opening = first.flows.openPicked({ label: 'tiny', files: files() });
    first.h.worker.reply({ type: 'hfOpened', requestId: first.h.worker.idOf('hfOpen'), model: MODEL });
    await opening;
    const exported = async (h: typeof first.h, byte: number) => {
      await h.advance();
      h.worker.reply({ type: 'hfAdapter', requestId: h.worker.idOf('hfExportAdapter'), config: '{"r":8}', weights: new Uint8Array([byte]), state: new Uint8Array([byte]) });
      await h.advance();
    };
    // an earlier run, drawn beside the arms
    const earlier = first.flows.train();
    first.h.worker.reply({ type: 'hfTrainRow', requestId: first.h.worker.idOf('hfTrain'), row: row(1) });
    first.h.worker.reply({ type: 'hfTrained', requestId: first.h.worker.idOf('hfTrain'), iterations: 1, stopped: false });
    await exported(first.h, 1);
    await earlier;
    // Run both, 2 iterations an arm: the page goes after the first arm's first checkpoint
    const arms = HF_PRESETS.map((p) => ({ ...p.settings, iterations: 2 }));
    void first.flows.trainBoth(arms);
    const id = first.h.worker.idOf('hfTrain');
    first.h.worker.reply({ type: 'hfTrainRow', requestId: id, row: row(1) });
    first.h.worker.reply({ type: 'hfTrainCheckpoint', requestId: id, iter: 1, config: '{"r":8}', weights: new Uint8Array([2]), state: new Uint8Array([2]) });
    await first.h.advance();
    const keptRecord = (await first.adapterKeep.read())!.record;
    expect(keptRecord).toMatchObject({ iterations: 1, settings: arms[0], runBoth: { arm: 0, arms } });
    const earlierRun = { model: 'tiny', settings: DEFAULT_HF_TRAIN, rows: [{ ...row(1), responses: [] }] };
    expect(keptRecord.compared).toEqual([earlierRun]);

    // A new page over the same browser storage offers to go on with it
    const h = clientHarness();
    const extra = trainDeps(first.adapterKeep);
    const flows = new HfFlows({ store: createHfStore(), connection: () => h.client.connection, keep: first.keep, seed: () => 1, ...extra });
    const reopening = flows.openPicked({ label: 'tiny', files: files() });
    h.worker.reply({ type: 'hfOpened', requestId: h.worker.idOf('hfOpen'), model: MODEL });
    await reopening;
    expect(useHfTrain.getState().keptOffer).toEqual({ label: 'tiny', iterations: 1, runBoth: { arm: 0, arms: 2, iterations: 1 } });
    const going = flows.continueRunBoth();
    await h.advance();
    h.worker.reply({ type: 'hfAdapterLoaded', requestId: h.worker.idOf('hfLoadAdapter'), adapter: { r: 8, alpha: 16, rslora: false, targets: ['q_proj'] } });
    await h.advance();
    // the first arm trains on from its checkpoint to its second iteration, as Continue does
    expect(h.worker.of('hfTrain').map((m) => [m.settings, m.resume])).toEqual([[{ ...arms[0], iterations: 1 }, { fromIter: 1 }]]);
    expect(useHfTrain.getState()).toMatchObject({ runBoth: { arm: 0, arms: 2 }, rows: [row(1)], compared: [earlierRun] });
    h.worker.reply({ type: 'hfTrainRow', requestId: h.worker.idOf('hfTrain'), row: row(2) });
    h.worker.reply({ type: 'hfTrained', requestId: h.worker.idOf('hfTrain'), iterations: 1, stopped: false });
    await exported(h, 3);
    // then the second arm, fresh; the first arm's two rows beside it
    expect(h.worker.of('hfTrain').map((m) => [m.settings, m.resume])).toEqual([
      [{ ...arms[0], iterations: 1 }, { fromIter: 1 }],
      [arms[1], undefined],
    ]);
    expect(useHfTrain.getState()).toMatchObject({ runBoth: { arm: 1, arms: 2 }, compared: [earlierRun, { model: 'tiny', settings: arms[0], rows: [row(1), row(2)] }] });
    h.worker.reply({ type: 'hfTrainRow', requestId: h.worker.idOf('hfTrain'), row: row(1) });
    h.worker.reply({ type: 'hfTrainRow', requestId: h.worker.idOf('hfTrain'), row: row(2) });
    h.worker.reply({ type: 'hfTrained', requestId: h.worker.idOf('hfTrain'), iterations: 2, stopped: false });
    await exported(h, 4);
    await going;
    expect(useHfTrain.getState().runBoth).toBeNull();
    // done: what is kept is a finished Run both, nothing left to go on with
    const done = (await first.adapterKeep.read())!.record;
    expect(done).toMatchObject({ iterations: 2, settings: arms[1], runBoth: { arm: 1, arms } });
    await flows.continueRunBoth();
    expect(h.worker.of('hfLoadAdapter')).toHaveLength(1); // nothing put back
    // Stop in an arm ends the sequence for good: what is kept then carries no Run both
    void flows.trainBoth(arms);
    flows.stopTraining();
    h.worker.reply({ type: 'hfTrainRow', requestId: h.worker.idOf('hfTrain'), row: row(1) });
    h.worker.reply({ type: 'hfTrained', requestId: h.worker.idOf('hfTrain'), iterations: 1, stopped: true });
    await exported(h, 5);
    const stopped = (await first.adapterKeep.read())!.record;
    expect([stopped.iterations, stopped.runBoth]).toEqual([1, undefined]);
    expect(h.worker.of('hfTrain')).toHaveLength(3);
  });
});
