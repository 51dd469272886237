// A run of the visitor's own model as one file (src/store/hfRunFile.ts): written and read back it
// is the same run — model, settings, every row with every response's tokens (by column, each
// number bit for bit; a version 1 file reads as the same run), the evaluations, the last
// iteration's trace for the inspector, the adapter's PEFT files and training state byte for byte; a playground run file and this one each
// name where the other opens; another version, a damaged field and a file too large are refused
// naming the field; a run goes back only on the model it was trained on.
import { describe, expect, it } from 'vitest';
import { mutatedRunFile } from '../../src/fuzz/files.ts';
import { checked, DEFAULT_CONFIG } from '../../src/rl/config.ts';
import { RunFileError } from '../../src/store/fileChecks.ts';
import { HF_RUN_FILE_MAX_BYTES, HF_RUN_FILE_VERSION, HF_RUN_FILE_VERSIONS_READ, type HfRecordedRun, hfRunFileText, otherModel, readHfRunFile } from '../../src/store/hfRunFile.ts';
import { hfRunFileRefused, runFileRefused } from '../../src/store/notices.ts';
import { readRunFile, runFileText } from '../../src/store/runFile.ts';
import { hfRecordedRun, hfRunRow, tinyModelSummary } from '../helpers/hfRunFixture.ts';
import { rng } from '../helpers/random.ts';

/** The refusal `read` throws, as { reason, field }. */
function refusal(read: () => unknown): { reason: string; field: string } {
  try {
    read();
  } catch (e) {
    if (!(e instanceof RunFileError)) throw e;
    return { reason: e.reason, field: e.field };
  }
  throw new Error('the file was read, not refused');
}

// biome-ignore lint/suspicious/noExplicitAny: a saved file's JSON, damaged at will
type Doc = Record<string, any>;

/** A base64 float64 column with its first number made NaN. */
function nanFirst(column: string): string {
  const bytes = Uint8Array.from(atob(column), (c) => c.charCodeAt(0));
  new DataView(bytes.buffer).setFloat64(0, Number.NaN, true);
  return btoa(String.fromCharCode(...bytes));
}

/** The saved text of `run` with `edit` applied to its JSON document. */
function edited(run: HfRecordedRun, edit: (doc: Doc) => void): string {
  const doc = JSON.parse(hfRunFileText(run));
  edit(doc);
  return JSON.stringify(doc);
}

const MODEL = tinyModelSummary('tiny qwen');

describe('a run of your own model as a file', () => {
  it('reads back as the run it was written from, the adapter and training state byte for byte', () => {
    for (const [seed, withState] of [
      [1, true],
      [2, false],
    ] as const) {
      const run = hfRecordedRun(rng(seed), 4, withState);
      const back = readHfRunFile(hfRunFileText(run));
      expect(back).toEqual(run);
      expect(Array.from(back.adapter.weights)).toEqual(Array.from(run.adapter.weights));
      if (withState) expect(Array.from(back.adapter.state!)).toEqual(Array.from(run.adapter.state!));
      else expect(back.adapter.state).toBeUndefined();
    }
    // A run with no row yet (an adapter loaded, not trained) is not one the panel saves, but reads.
    const empty = { ...hfRecordedRun(rng(3), 0), evals: [] };
    expect(readHfRunFile(hfRunFileText(empty))).toEqual(empty);
  });

  it('keeps every token number bit for bit by column, and reads a version 1 file (a token an object) as the same run', () => {
    const plain = hfRecordedRun(rng(10), 3);
    const run = structuredClone(plain);
    // the numbers a float64 trainer writes, and the edges: −0 (JSON's numbers write it 0), subnormal, the largest double
    const edges = [-0, 5e-324, -Number.MAX_VALUE, 0.1 + 0.2, -1e-300];
    run.rows[0].responses[0].tokens.push(...edges.map((x, i) => ({ id: i, text: `t${i}`, old: x, ref: -x, logprob: x / 3, advantage: x, clip: null })));
    const text = hfRunFileText(run);
    const doc = JSON.parse(text);
    expect(doc.version).toBe(HF_RUN_FILE_VERSION);
    expect(Object.keys(doc.rows[0].responses).sort()).toEqual(['advantage', 'clip', 'id', 'length', 'logprob', 'old', 'prompt', 'ref', 'response', 'score', 'text']);
    const back = readHfRunFile(text);
    const bits = (x: HfRecordedRun) =>
      x.rows.flatMap((row) => row.responses.flatMap((v) => v.tokens.flatMap((t) => [t.old, t.ref, t.logprob, t.advantage].map((n) => (Object.is(n, -0) ? '-0' : n.toString(16))))));
    expect(bits(back)).toEqual(bits(run));
    expect(back).toEqual(run);
    const v1 = JSON.stringify({ ...JSON.parse(hfRunFileText(plain)), version: 1, rows: plain.rows });
    expect(readHfRunFile(v1)).toEqual(plain);
    // 64 answers a row, as "GRPO on your own model" records: under half of version 1's bytes
    const big = { ...run, rows: [hfRunRow(rng(11), 1, 64)], iterations: 1 };
    const v2Bytes = JSON.stringify(JSON.parse(hfRunFileText(big)).rows).length;
    expect(v2Bytes).toBeLessThan(JSON.stringify(big.rows).length / 2);
  });

  it('each kind of run file names where the other opens; another format and version are refused by name', () => {
    const own = hfRunFileText(hfRecordedRun(rng(4)));
    expect(refusal(() => readRunFile(own))).toEqual({ reason: 'own-model-run', field: 'format' });
    let said = '';
    try {
      readRunFile(own);
    } catch (e) {
      said = runFileRefused('tiny-run-3.json', e);
    }
    expect(said).toBe(
      '“tiny-run-3.json” not opened: it is a run of a model of your own: open it under “Your own model” with “Open a saved run…”. The runs on the page are untouched.',
    );
    const playground = runFileText({ id: 'r', name: 'r', color: '#000', visible: true, config: checked(DEFAULT_CONFIG), backend: 'cpu', createdAt: 0, metrics: [] }, null, []);
    expect(refusal(() => readHfRunFile(playground))).toEqual({ reason: 'playground-run', field: 'format' });
    expect(refusal(() => readHfRunFile('{"format":"safetensors"}'))).toEqual({ reason: 'not-a-run', field: 'format' });
    expect(refusal(() => readHfRunFile('[1,2'))).toEqual({ reason: 'not-json', field: 'file' });
    const run = hfRecordedRun(rng(5));
    expect(refusal(() => readHfRunFile(edited(run, (d) => (d.version = HF_RUN_FILE_VERSION + 1))))).toEqual({ reason: 'version', field: 'version' });
    expect(refusal(() => readHfRunFile(edited(run, (d) => (d.version = 0))))).toEqual({ reason: 'version', field: 'version' });
    let saidLater = '';
    try {
      readHfRunFile(edited(run, (d) => (d.version = 3)));
    } catch (e) {
      saidLater = hfRunFileRefused('later.json', e, HF_RUN_FILE_VERSIONS_READ, HF_RUN_FILE_MAX_BYTES);
    }
    expect(saidLater).toContain('it was written in run-file version 3; this page reads version 1 or 2');
    expect(refusal(() => readHfRunFile(' '.repeat(256 * 1024 * 1024 + 1)))).toEqual({ reason: 'too-large', field: 'file' });
  });

  it('a damaged field is refused naming it', () => {
    const run = hfRecordedRun(rng(6), 3);
    const cases: [string, (d: Doc) => void][] = [
      ['savedAt', (d) => (d.savedAt = 'yesterday')],
      ['model', (d) => delete d.model],
      ['model.nLayer', (d) => (d.model.nLayer = -1)],
      ['model.label', (d) => (d.model.label = 7)],
      ['settings.loraRank', (d) => (d.settings.loraRank = 0)],
      ['settings.lr', (d) => (d.settings.lr = 'fast')],
      ['settings.estimator', (d) => (d.settings.estimator = 'ppo')],
      ['settings.reward', (d) => (d.settings.reward = 'gsm8k')],
      ['settings.chat', (d) => (d.settings.chat = 'yes')],
      ['settings.samplesPerPrompt', (d) => (d.settings.samplesPerPrompt = 1)], // GRPO compares a prompt's samples
      ['settings.miniBatches', (d) => (d.settings.miniBatches = 3)], // 16 responses
      ['iterations', (d) => (d.iterations = 5)],
      ['rows', (d) => (d.rows = {})],
      ['rows[1].iter', (d) => (d.rows[1].iter = 7)],
      ['rows[0].kl', (d) => (d.rows[0].kl = null)], // NaN as JSON writes it
      ['rows[2].value_loss', (d) => (d.rows[2].value_loss = '0.1')],
      ['rows[0].responses', (d) => (d.rows[0].responses = [])],
      ['rows[0].responses.score[1]', (d) => (d.rows[0].responses.score[1] = '1')],
      ['rows[0].responses.response', (d) => d.rows[0].responses.response.pop()],
      ['rows[0].responses.length[2]', (d) => (d.rows[0].responses.length[2] = -1)],
      ['rows[0].responses.id', (d) => (d.rows[0].responses.length[0] += 1)], // a token more than the columns hold
      ['rows[1].responses.advantage', (d) => (d.rows[1].responses.advantage = 'not base64!')],
      ['rows[1].responses.advantage', (d) => (d.rows[1].responses.advantage = d.rows[1].responses.advantage.slice(0, -12))], // a token's bytes short
      ['rows[1].responses.old[0]', (d) => (d.rows[1].responses.old = nanFirst(d.rows[1].responses.old))],
      ['rows[1].responses.clip', (d) => (d.rows[1].responses.clip = `x${d.rows[1].responses.clip.slice(1)}`)],
      ['rows[1].responses.clip', (d) => (d.rows[1].responses.clip += '-')],
      ['rows[1].responses.id[0]', (d) => (d.rows[1].responses.id[0] = 1.5)],
      ['rows[1].responses.text[0]', (d) => (d.rows[1].responses.text[0] = 3)],
      ['evals[1].greedyAccuracy', (d) => (d.evals[1].greedyAccuracy = 1.5)],
      ['evals[1].when', (d) => (d.evals[1].when = 'before')],
      ['evals[1].sampled', (d) => (d.evals[1].sampled = 0.5)],
      ['evals[1].sampled.accuracy', (d) => (d.evals[1].sampled.accuracy = -0.1)],
      ['evals[1].sampled.samples', (d) => (d.evals[1].sampled.samples = 0.5)],
      ['adapter', (d) => delete d.adapter],
      ['adapter.config', (d) => (d.adapter.config = '{"r": 2')],
      ['adapter.weights', (d) => (d.adapter.weights = 'not base64!')],
      ['adapter.weights', (d) => (d.adapter.weights = btoa('PK\x03\x04 a zip, not safetensors'))],
      ['adapter.state', (d) => (d.adapter.state = d.adapter.state.slice(0, 40))],
      ['lastTrace.trace.iter', (d) => (d.lastTrace.trace.iter = 2)], // not the run's last iteration
      ['lastTrace.trace.knobs', (d) => delete d.lastTrace.trace.knobs],
      ['lastTrace.trace.knobs.clipLow', (d) => (d.lastTrace.trace.knobs.clipLow = -1)],
      ['lastTrace.trace.knobs.advantageEstimator', (d) => (d.lastTrace.trace.knobs.advantageEstimator = 'ppo')],
      ['lastTrace.trace.knobs.whiten', (d) => delete d.lastTrace.trace.knobs.whiten],
      ['lastTrace.trace.stored', (d) => (d.lastTrace.trace.stored = 1)],
      ['lastTrace.trace.minibatches', (d) => (d.lastTrace.trace.minibatches = {})],
      ['lastTrace.trace.minibatches[0]', (d) => (d.lastTrace.trace.minibatches[0] = 'step')],
      ['lastTrace.trace.oldLogprobs[1]', (d) => (d.lastTrace.trace.oldLogprobs[1] = null)],
      ['lastTrace.trace', (d) => d.lastTrace.trace.refLogprobs.pop()],
      ['lastTrace', (d) => d.lastTrace.prompts.pop()],
      ['lastTrace.endedWithEos', (d) => d.lastTrace.endedWithEos.pop()],
      ['lastTrace.endedWithEos[1]', (d) => (d.lastTrace.endedWithEos[1] = 1)],
      ['lastTrace.endedWithEos', (d) => (d.lastTrace.endedWithEos = 'all')],
    ];
    for (const [field, edit] of cases) expect({ case: field, ...refusal(() => readHfRunFile(edited(run, edit))) }).toEqual({ case: field, reason: 'damaged', field });
    // A trace saved before the EOS flags reads without them.
    expect(readHfRunFile(edited(run, (d) => delete d.lastTrace.endedWithEos)).lastTrace!.endedWithEos).toBeUndefined();
    expect(run.lastTrace!.endedWithEos).toHaveLength(run.lastTrace!.trace.B);
    // A number too large for a double reads as Infinity: refused, not shown.
    const huge = edited(run, (d) => (d.rows[0].responses.score[1] = 0.125)).replace(',0.125', ',1e400');
    expect(refusal(() => readHfRunFile(huge))).toEqual({ reason: 'damaged', field: 'rows[0].responses.score[1]' });
    // Version 1's tokens are checked as they were.
    const v1 = (edit: (d: Doc) => void) =>
      edited(run, (d) => {
        d.version = 1;
        d.rows = structuredClone(run.rows);
        edit(d);
      });
    expect(refusal(() => readHfRunFile(v1((d) => (d.rows[1].responses[0].tokens[0].advantage = null))))).toEqual({
      reason: 'damaged',
      field: 'rows[1].responses[0].tokens[0].advantage',
    });
    expect(refusal(() => readHfRunFile(v1((d) => (d.rows[1].responses[0].tokens[0].clip = 'left'))))).toEqual({ reason: 'damaged', field: 'rows[1].responses[0].tokens[0].clip' });
  });

  it('damaged at random, a file reads whole with finite numbers or is refused by name', () => {
    const r = rng(7);
    const text = hfRunFileText(hfRecordedRun(r, 2));
    let refused = 0;
    for (let i = 0; i < 300; i++) {
      const mutated = mutatedRunFile(r, text);
      try {
        const back = readHfRunFile(mutated);
        for (const row of back.rows)
          for (const x of [row.reward_mean, row.kl, ...row.responses.flatMap((v) => v.tokens.map((t) => t.advantage))]) expect(Number.isFinite(x)).toBe(true);
      } catch (e) {
        expect(e).toBeInstanceOf(RunFileError);
        refused++;
      }
    }
    expect(refused).toBeGreaterThan(100);
  });

  it('goes back only on the model it was trained on, naming what differs', () => {
    const run = hfRecordedRun(rng(8));
    expect(otherModel(run.model, MODEL)).toBeNull();
    expect(otherModel(run.model, { ...MODEL, label: 'other' })).toBe('label "tiny qwen" ≠ "other"');
    expect(otherModel(run.model, { ...MODEL, nLayer: 28, vocab: 151_936 })).toBe('nLayer 2 ≠ 28, vocab 384 ≠ 151936');
  });
});

describe('a run of your own model opened with the charts’ Open run…', () => {
  it('goes to “Your own model”, shown there as recorded, and the notice says where', async () => {
    const { openRunFile } = await import('../../src/store/runFiles.ts');
    const { useHfTrain } = await import('../../src/store/hfTrain.ts');
    const { useHf } = await import('../../src/store/hfModel.ts');
    const { useApp } = await import('../../src/store/appStore.ts');
    const run = hfRecordedRun(rng(9));
    const text = hfRunFileText(run);
    const runsBefore = useApp.getState().runs;
    const opened = await openRunFile({ name: 'tiny-run-3.json', size: text.length, text: async () => text });
    expect(opened).toEqual({
      run: null,
      ownModel: true,
      message: 'Opened tiny-run-3.json under “1 · SFT” → “Your own model”: a run of a model of your own, shown there as recorded.',
    });
    expect(useHfTrain.getState().recorded).toEqual({ fileName: 'tiny-run-3.json', savedAt: run.savedAt, run });
    expect(useHf.getState().shown).toBe(true);
    expect(useApp.getState().notice).toEqual({ tone: 'info', text: opened.message });
    expect(useApp.getState().runs).toBe(runsBefore);
    // A damaged one is refused there, in that panel's words, and nothing is shown.
    useHfTrain.getState().recordedClosed();
    const damaged = edited(run, (d) => (d.iterations = 4));
    const refused = await openRunFile({ name: 'bad.json', size: damaged.length, text: async () => damaged });
    expect(refused.run).toBeNull();
    expect(refused.ownModel).toBe(false);
    expect(refused.message).toBe('“bad.json” not opened: it is damaged at iterations (iterations: 4, but the last row is iteration 3). The model and its adapter are untouched.');
    expect(useApp.getState().notice?.tone).toBe('error');
    expect(useHfTrain.getState().recorded).toBeNull();
  });
});
