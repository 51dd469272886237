// Training the visitor's own model in the worker (src/worker/hfTraining.ts through HfSession), on
// the float64 CPU backend and a fresh synthetic Qwen3 folder: the page's reward function on typed
// prompts trains 2 GRPO iterations, one row each whose sample's score is the function's own value,
// and one trace for the inspector each, then the adapter exports as PEFT files; the chat arithmetic task reports greedy held-out accuracy
// before and after; Stop ends the run after the iteration in flight; bad settings, a broken
// reward function and a missing model are refused by name, with no row posted; a continued run,
// in the session or from the exported training state (or a checkpoint the run posted), ends
// exactly where an unbroken one does; a large adapter's checkpoints wait CHECKPOINT_SECONDS.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkpointFolderFiles } from '../../src/model/hf/charModelFolder.ts';
import { getTask, taskTokenizer } from '../../src/tasks/index.ts';
import { modelFromCheckpoint } from '../../src/model/checkpoint.ts';
import { greedySamples } from '../../src/rl/evaluation.ts';
import { CpuBackend } from '../../src/backend/cpu/cpuBackend.ts';
import { FileListFolder } from '../../src/model/hf/browserFolder.ts';
import { synthesizeToMemory } from '../../src/model/hf/synthetic.ts';
import { decodeSafetensors, encodeSafetensors } from '../../src/model/safetensors.ts';
import { DEFAULT_HF_TRAIN, HF_TRAIN_EVAL_COUNT, HF_TRAIN_EVAL_SAMPLES, type HfTrainSettings } from '../../src/rl/hf/hfTrainSettings.ts';
import { HfSession, type HfSessionDeps } from '../../src/worker/hfSession.ts';
import { CHECKPOINT_EVERY_ITERATION_BYTES, CHECKPOINT_SECONDS, checkpointDue } from '../../src/worker/hfTraining.ts';
import type { WorkerToPage } from '../../src/worker/protocol.ts';
import { rng } from '../helpers/random.ts';
import { SAMPLE_ROWS } from '../../src/rl/samples.ts';
import { traceBatch } from '../../src/store/traceBatch.ts';

const VOWELS = '(prompt, response) => response.length === 0 ? 0 : (response.match(/[aeiou]/g) || []).length / response.length';
const vowelShare = (r: string) => (r.length === 0 ? 0 : (r.match(/[aeiou]/g) || []).length / r.length);
const SMALL: HfTrainSettings = {
  ...DEFAULT_HF_TRAIN,
  reward: 'function',
  prompts: 'hello there\nthe cat\n',
  chat: false,
  loraRank: 2,
  iterations: 2,
  promptsPerBatch: 2,
  samplesPerPrompt: 2,
  maxNewTokens: 4,
  lr: 1e-2,
};

async function opened(
  onPost?: (m: WorkerToPage, s: HfSession) => void,
  offer?: HfSessionDeps['offer'],
  be: CpuBackend = new CpuBackend(),
  folder?: { label: string; files: Map<string, Uint8Array> },
) {
  const posted: WorkerToPage[] = [];
  const box: { s?: HfSession } = {};
  const s = new HfSession({
    post: (m) => {
      posted.push(m);
      onPost?.(m, box.s!);
    },
    now: () => 0,
    offer,
  });
  box.s = s;
  const { label, files } = folder ?? {
    label: 'tiny-qwen3',
    files: (await synthesizeToMemory({ family: 'qwen3', dtype: 'F32', shards: 1, seed: rng(41).nextU32() }, 'tiny-qwen3')).files,
  };
  await s.open(
    be,
    new FileListFolder(
      [...files].map(([n, b]) => new File([b.slice()], n)),
      label,
    ),
    1,
  );
  const of = <T extends WorkerToPage['type']>(type: T) => posted.filter((m) => m.type === type) as Extract<WorkerToPage, { type: T }>[];
  return { s, of };
}

describe('checkpoints of a run in flight', () => {
  it('a small adapter after every iteration; a large one (a long readback) at most every CHECKPOINT_SECONDS', () => {
    expect(checkpointDue(CHECKPOINT_EVERY_ITERATION_BYTES, 0)).toBe(true);
    expect(checkpointDue(CHECKPOINT_EVERY_ITERATION_BYTES + 1, 0)).toBe(false);
    expect(checkpointDue(CHECKPOINT_EVERY_ITERATION_BYTES + 1, CHECKPOINT_SECONDS - 0.001)).toBe(false);
    expect(checkpointDue(CHECKPOINT_EVERY_ITERATION_BYTES + 1, CHECKPOINT_SECONDS)).toBe(true);
  });
});

describe('HfSession training', () => {
  it('trains with the page’s reward function, one row per iteration, and exports the adapter as PEFT files', async () => {
    const { s, of } = await opened();
    await s.train({ settings: SMALL, rewardFunction: VOWELS }, 7);
    expect(of('hfTrained')).toEqual([{ type: 'hfTrained', requestId: 7, iterations: 2, stopped: false }]);
    const rows = of('hfTrainRow').map((m) => m.row);
    expect(rows.map((r) => r.iter)).toEqual([1, 2]);
    for (const r of rows) {
      for (const x of [r.reward_mean, r.kl, r.response_length_mean, r.policy_loss, r.clipfrac]) expect(Number.isFinite(x)).toBe(true);
      expect(r.value_loss).toBeNull();
      // every response of the batch (2 prompts × SMALL's samples), each scored by the function, with its inspected tokens
      expect(r.responses.length).toBe(2 * SMALL.samplesPerPrompt);
      for (const x of r.responses) {
        expect(['hello there', 'the cat']).toContain(x.prompt);
        expect(x.score).toBeCloseTo(vowelShare(x.response), 12);
        expect(x.tokens.length).toBeGreaterThan(0);
      }
    }
    expect(rows[0].kl).toBe(0);
    // each iteration's trace for the inspector: the row's iteration, its responses' prompts, and
    // each response's tokens as the row lists them (padding '')
    const traces = of('hfTrace');
    expect(traces.map((m) => m.trace.iter)).toEqual([1, 2]);
    traces.forEach(({ trace, prompts, tokenText }, i) => {
      expect(trace.knobs.advantageEstimator).toBe(SMALL.estimator);
      expect(prompts).toEqual(rows[i].responses.map((x) => x.prompt));
      rows[i].responses.forEach((x, b) => {
        const texts = tokenText.slice(b * trace.A, (b + 1) * trace.A);
        expect(texts).toEqual([...x.tokens.map((tok) => tok.text), ...Array(trace.A - x.tokens.length).fill('')]);
        expect(Array.from(trace.responseTokens.subarray(b * trace.A, b * trace.A + x.tokens.length))).toEqual(x.tokens.map((tok) => tok.id));
      });
    });
    // the teaching views' batch read off each trace (the Samples tab): the last step's rows, each
    // token as the panel's row lists it, the response's score, and whether it ended with EOS
    // (a response shorter than the token budget did)
    traces.forEach((m, i) => {
      const batch = traceBatch(m);
      const step = m.trace.minibatches.at(-1)!;
      expect(batch.samples!.rows.length).toBe(Math.min(SAMPLE_ROWS, step.rows.length));
      batch.samples!.rows.forEach((row, j) => {
        const b = step.rows[j];
        const x = rows[i].responses[b];
        expect(row.prompt).toBe(x.prompt);
        expect(row.reward).toBe(x.score);
        expect(row.endedWithEos).toBe(m.endedWithEos[b]);
        if (x.tokens.length < SMALL.maxNewTokens) expect(row.endedWithEos).toBe(true);
        expect(row.tokens.map((tok) => [tok.text, tok.oldLogprob, tok.refLogprob, tok.newLogprob, tok.advantage])).toEqual(
          x.tokens.map((tok) => [tok.text, tok.old, tok.ref, tok.logprob, tok.advantage]),
        );
        for (const tok of row.tokens) expect(tok.ratio).toBeCloseTo(Math.exp(tok.newLogprob! - tok.oldLogprob!), 12);
      });
      expect(batch.ratios!.ratios.length).toBe(step.rows.reduce((n, b) => n + rows[i].responses[b].tokens.length, 0));
    });
    expect(traces.every((m) => m.endedWithEos.length === m.trace.B)).toBe(true);
    expect(of('hfTrainEval')).toEqual([]); // no held-out set for typed prompts
    await s.exportAdapter(8);
    const a = of('hfAdapter')[0];
    expect(a.refusal).toBeUndefined();
    expect(a.state).toBeUndefined(); // PEFT's two files only: the training state is asked for by name
    expect(JSON.parse(a.config!)).toMatchObject({ peft_type: 'LORA', r: 2, lora_alpha: 4, base_model_name_or_path: 'tiny-qwen3' });
    const headerLength = Number(new DataView(a.weights!.buffer, a.weights!.byteOffset).getBigUint64(0, true));
    const header = JSON.parse(new TextDecoder().decode(a.weights!.subarray(8, 8 + headerLength)));
    expect(header['base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight'].shape).toEqual([2, 64]);
    s.close();
    await s.exportAdapter(9);
    expect(of('hfAdapter')[1].refusal).toMatch(/no trained adapter/);
  });

  it('the chat arithmetic task reports held-out accuracy before and after, greedy and over sampled answers; a GAE run reports a value loss', async () => {
    const { s, of } = await opened();
    await s.train({ settings: { ...SMALL, reward: 'chat-arithmetic', estimator: 'gae', samplesPerPrompt: 1, iterations: 1 }, rewardFunction: '' }, 3);
    expect(of('hfTrained')[0]).toMatchObject({ iterations: 1, stopped: false });
    expect(of('hfTrainEval').map((m) => m.eval.when)).toEqual(['before', 'after']);
    for (const { eval: e } of of('hfTrainEval')) {
      expect(e.count).toBe(HF_TRAIN_EVAL_COUNT);
      expect(e.greedyAccuracy).toBeGreaterThanOrEqual(0);
      expect(e.greedyAccuracy).toBeLessThanOrEqual(1);
      // over HF_TRAIN_EVAL_SAMPLES answers to each problem: a whole count of the draws
      expect(e.sampled!.samples).toBe(HF_TRAIN_EVAL_SAMPLES);
      expect(Number.isInteger(e.sampled!.accuracy * HF_TRAIN_EVAL_COUNT * HF_TRAIN_EVAL_SAMPLES)).toBe(true);
      expect(e.sampled!.accuracy).toBeLessThanOrEqual(1);
    }
    const row = of('hfTrainRow')[0].row;
    for (const x of row.responses) expect(x.prompt).toMatch(/^What is \d+ \+ \d+\? Answer with the number\.$/);
    expect(Number.isFinite(row.value_loss)).toBe(true);
  });

  it('the playground’s arithmetic task on its own model as GPT-2: the task’s prompts, scored by its rule (EOS included), held-out accuracy before and after', async () => {
    const checkpoint = new Uint8Array(readFileSync(new URL('../../public/checkpoints/arithmetic.safetensors', import.meta.url)));
    const { s, of } = await opened(undefined, undefined, new CpuBackend(), { label: 'arithmetic-sft-gpt2', files: checkpointFolderFiles(checkpoint) });
    // chat stays on from the defaults: a playground task never goes through a chat template, so the model needs none
    await s.train({ settings: { ...SMALL, reward: 'arithmetic', chat: true, iterations: 1, promptsPerBatch: 2, samplesPerPrompt: 2, maxNewTokens: 5 }, rewardFunction: '' }, 4);
    expect(of('hfTrained')[0]).toMatchObject({ iterations: 1, stopped: false });
    expect(of('hfTrained')[0].refusal).toBeUndefined();
    const task = getTask('arithmetic');
    const row = of('hfTrainRow')[0].row;
    expect(row.responses).toHaveLength(4);
    const eos = 2; // the character tokenizer's, the folder's eos_token_id
    for (const x of row.responses) {
      expect(x.prompt).toMatch(/^\d+[+-]\d+=$/);
      // the tokens the update saw end with EOS when the answer did: the rule is told so
      const endedWithEos = x.tokens.at(-1)?.id === eos;
      expect(x.score).toBe(task.ruleScore({ prompt: x.prompt, response: x.response, endedWithEos }));
    }
    // the shipped model answers most sums right: the rule is the task's, not a constant
    expect(row.responses.some((x) => x.score === 1)).toBe(true);
    expect(of('hfTrainEval').map((m) => m.eval.when)).toEqual(['before', 'after']);
    const before = of('hfTrainEval')[0].eval;
    expect(before.count).toBe(HF_TRAIN_EVAL_COUNT);
    // before training, the playground's own greedy evaluation of its model on the same prompts: the same answers, the same share
    const be = new CpuBackend();
    const { model: gpt } = modelFromCheckpoint(be, checkpoint);
    const greedy = await greedySamples(gpt, task, taskTokenizer(task), HF_TRAIN_EVAL_COUNT, 5);
    gpt.dispose();
    expect(before.greedyAccuracy).toBe(greedy.filter((x) => task.ruleScore(x) >= 0.5).length / HF_TRAIN_EVAL_COUNT);
  });

  it('a run whose buffers exceed one binding of the device is refused by the memory plan before anything is made', async () => {
    // A small adapter: the model opens (its plan is one row of up to 512 tokens) but the experience's
    // forward over 128 responses of 64 tokens, the same rows as a minibatch of all of them, makes
    // MLP activations larger than one binding (named once).
    const binding = 2 * 2 ** 20;
    const small = () => ({ maxBufferSize: binding, maxStorageBufferBindingSize: binding, maxStorageBuffersPerShaderStage: 8, shaderF16: false });
    const { s, of } = await opened(undefined, small);
    expect(of('hfOpened')[0].refusal).toBeUndefined();
    await s.train({ settings: { ...SMALL, promptsPerBatch: 16, samplesPerPrompt: 8, maxNewTokens: 64, miniBatches: 1, iterations: 1 }, rewardFunction: VOWELS }, 3);
    const [trained] = of('hfTrained');
    expect(trained).toMatchObject({ requestId: 3, iterations: 0, stopped: false });
    expect(trained.refusal).toMatch(
      /^Does not fit: the MLP activations of the experience forward take [\d.]+ MiB, more than one binding \(2\.0 MiB\): lower the batch or the sequence length\.$/,
    );
    expect(of('hfTrainRow')).toEqual([]);
    await s.exportAdapter(4); // nothing was made: no adapter to export
    expect(of('hfAdapter')[0].refusal).toBe('no trained adapter: train the model first');
  });

  it('the pool is bounded by the plan while the run trains, and unbounded after it', async () => {
    const bounds: (number | null)[] = [];
    const be = new (class extends CpuBackend {
      override boundMemory(bytes: number | null): void {
        bounds.push(bytes);
      }
    })();
    let duringRun: (number | null)[] = [];
    const { s, of } = await opened(
      (m) => {
        if (m.type === 'hfTrainRow' && duringRun.length === 0) duringRun = [...bounds];
      },
      undefined,
      be,
    );
    await s.train({ settings: { ...SMALL, iterations: 1 }, rewardFunction: VOWELS }, 1);
    expect(of('hfTrained').at(-1)!.refusal).toBeUndefined();
    expect(duringRun).toHaveLength(1);
    expect(duringRun[0]).toBeGreaterThan(0);
    expect(bounds).toEqual([duringRun[0], null]);
  });

  it('Stop ends the run after the iteration in flight', async () => {
    const { s, of } = await opened((m, session) => {
      if (m.type === 'hfTrainRow') session.stopTraining();
    });
    await s.train({ settings: { ...SMALL, iterations: 5 }, rewardFunction: VOWELS }, 4);
    expect(of('hfTrained')).toEqual([{ type: 'hfTrained', requestId: 4, iterations: 1, stopped: true }]);
  });

  it('bad settings, a broken reward function and a missing model are refused by name', async () => {
    const none = new HfSession({ post: () => {} });
    const posted: WorkerToPage[] = [];
    const bare = new HfSession({ post: (m) => posted.push(m) });
    await bare.train({ settings: SMALL, rewardFunction: VOWELS }, 1);
    expect(posted).toEqual([{ type: 'hfTrained', requestId: 1, iterations: 0, stopped: false, refusal: 'no model is open: pick a folder first' }]);
    none.stopTraining(); // nothing running: nothing happens
    const { s, of } = await opened();
    await s.train({ settings: { ...SMALL, loraRank: 0, samplesPerPrompt: 1 }, rewardFunction: VOWELS }, 2);
    expect(of('hfTrained')[0].refusal).toBe('loraRank: an integer from 1 to 64; samplesPerPrompt: at least 2: GRPO compares the samples of one prompt');
    await s.train({ settings: SMALL, rewardFunction: '(prompt, response) => {' }, 3);
    expect(of('hfTrained')[1].refusal).toMatch(/^reward function: /);
    await s.train({ settings: SMALL, rewardFunction: '(prompt, response) => { throw new Error("boom") }' }, 5);
    expect(of('hfTrained')[2]).toMatchObject({ iterations: 0, refusal: expect.stringMatching(/^reward function: .*boom/) });
    expect(of('hfTrainRow')).toEqual([]);
  });

  it('a prompt the run would draw that leaves no room for the new tokens is refused before the run, naming the lengths', async () => {
    const { s, of } = await opened();
    // The third line is drawn only by the second iteration: the run is refused before its first.
    const long = `hello there\nthe cat\n${'the cat sat on the mat '.repeat(30)}\n`;
    await s.train({ settings: { ...SMALL, prompts: long, iterations: 2 }, rewardFunction: VOWELS }, 1);
    expect(of('hfTrained')[0]).toMatchObject({ iterations: 0, stopped: false });
    expect(of('hfTrained')[0].refusal).toMatch(/^prompts and maxNewTokens: the longest prompt is \d{3} tokens and 4 new tokens follow it, beyond the model's 128 positions$/);
    // The chat task's prompts are the task's: the number of new tokens is what to lower. The
    // largest run the panel allows (1 000 iterations × 64 prompts) is drawn and measured whole.
    await s.train({ settings: { ...SMALL, reward: 'chat-arithmetic', maxNewTokens: 127, iterations: 1000, promptsPerBatch: 64 }, rewardFunction: '' }, 2);
    expect(of('hfTrained')[1].refusal).toMatch(/^maxNewTokens: the longest prompt is \d+ tokens and 127 new tokens follow it, beyond the model's 128 positions$/);
    expect(of('hfTrainRow')).toEqual([]);
    expect(of('hfTrainEval')).toEqual([]);
    // One iteration draws only the first two lines: it runs.
    await s.train({ settings: { ...SMALL, prompts: long, iterations: 1 }, rewardFunction: VOWELS }, 3);
    expect(of('hfTrained')[2].refusal).toBeUndefined();
    expect(of('hfTrainRow')).toHaveLength(1);
  });

  it('an exported adapter loads back on the model (same log-probs) and a continued run counts on from its iteration', async () => {
    const { s, of } = await opened();
    await s.train({ settings: SMALL, rewardFunction: VOWELS }, 1);
    await s.exportAdapter(2);
    const { config, weights } = of('hfAdapter')[0];
    await s.generate({ prompt: 'the cat', chat: false, greedy: true, temperature: 1, topP: 1, maxNewTokens: 4, seed: 0 }, 3);
    const trainedSample = of('hfGenerated')[0].sample!;

    const other = await opened();
    await other.s.loadAdapter({ config: config!, weights: weights! }, 4);
    expect(other.of('hfAdapterLoaded')[0]).toEqual({
      type: 'hfAdapterLoaded',
      requestId: 4,
      adapter: { r: 2, alpha: 4, rslora: false, targets: expect.arrayContaining(['q_proj', 'down_proj']) },
    });
    await other.s.generate({ prompt: 'the cat', chat: false, greedy: true, temperature: 1, topP: 1, maxNewTokens: 4, seed: 0 }, 5);
    expect(other.of('hfGenerated')[0].sample!.tokens.map((t) => t.id)).toEqual(trainedSample.tokens.map((t) => t.id));

    await other.s.train({ settings: { ...SMALL, iterations: 1 }, rewardFunction: VOWELS, resume: { fromIter: 2 } }, 6);
    expect(other.of('hfTrained')[0]).toMatchObject({ iterations: 1, stopped: false });
    expect(other.of('hfTrainRow').map((m) => m.row.iter)).toEqual([3]);
    // a rank other than the adapter's is refused for a continued run; a bad adapter is refused by name
    await other.s.train({ settings: { ...SMALL, loraRank: 4 }, rewardFunction: VOWELS, resume: { fromIter: 3 } }, 7);
    expect(other.of('hfTrained')[1].refusal).toBe('loraRank: the adapter to continue has rank 2, not 4');
    await other.s.loadAdapter({ config: '{"peft_type":"IA3"}', weights: weights! }, 8);
    expect(other.of('hfAdapterLoaded')[1].refusal).toMatch(/peft_type is "IA3"; only "LORA"/);
  });
  it('a continued run takes the steps the run that never stopped takes: in one session, and after a reload with the training state', async () => {
    // GAE on the task: the prompts drawn on from where the run stopped, the critic and both roles'
    // AdamW moments carried; every number of the three runs' last states compared exactly.
    const GAE: HfTrainSettings = { ...SMALL, reward: 'chat-arithmetic', estimator: 'gae', samplesPerPrompt: 1, iterations: 3 };
    const exported = async (x: Awaited<ReturnType<typeof opened>>, requestId: number) => {
      await x.s.exportAdapter(requestId, true);
      const reply = x.of('hfAdapter').at(-1)!;
      expect(reply.refusal).toBeUndefined();
      return { config: reply.config!, weights: reply.weights!, state: reply.state! };
    };
    const straight = await opened();
    await straight.s.train({ settings: GAE, rewardFunction: '' }, 1);
    const want = await exported(straight, 2);
    // Its checkpoints (a small adapter: after every iteration but the last, which the run's end keeps).
    const lastRow = (x: Awaited<ReturnType<typeof opened>>) => {
      const { seconds: _, ...row } = x.of('hfTrainRow').at(-1)!.row;
      return row;
    };

    const paused = await opened();
    await paused.s.train({ settings: { ...GAE, iterations: 2 }, rewardFunction: '' }, 1);
    const atTwo = await exported(paused, 2);
    // The checkpoint after iteration 2 of the unbroken run is that state, byte for byte: the page
    // keeps it, and a reload or a lost device continues from it as from `atTwo` below.
    const checkpoints = straight.of('hfTrainCheckpoint');
    expect(checkpoints.map((c) => c.iter)).toEqual([1, 2]);
    expect(checkpoints[1].config).toBe(atTwo.config);
    expect(checkpoints[1].weights).toEqual(atTwo.weights);
    expect(checkpoints[1].state).toEqual(atTwo.state);
    await paused.s.train({ settings: { ...GAE, iterations: 1 }, rewardFunction: '', resume: { fromIter: 2 } }, 3);
    expect(paused.of('hfTrained').map((m) => m.iterations)).toEqual([2, 1]);
    // the continued run starts where the last evaluation after training was taken: only "after" again
    expect(paused.of('hfTrainEval').map((m) => m.eval.when)).toEqual(['before', 'after', 'after']);
    expect(lastRow(paused)).toEqual(lastRow(straight));
    const inSession = await exported(paused, 4);
    expect(inSession.weights).toEqual(want.weights);
    expect(inSession.state).toEqual(want.state);

    const reloaded = await opened();
    await reloaded.s.loadAdapter(atTwo, 1);
    expect(reloaded.of('hfAdapterLoaded')[0].refusal).toBeUndefined();
    await reloaded.s.train({ settings: { ...GAE, iterations: 1 }, rewardFunction: '', resume: { fromIter: 2 } }, 2);
    expect(lastRow(reloaded)).toEqual(lastRow(straight));
    const afterReload = await exported(reloaded, 3);
    expect(afterReload.weights).toEqual(want.weights);
    expect(afterReload.state).toEqual(want.state);

    // Without the state the adapter still loads and continues (fresh moments and critic): other steps.
    const peftOnly = await opened();
    await peftOnly.s.loadAdapter({ config: atTwo.config, weights: atTwo.weights }, 1);
    await peftOnly.s.train({ settings: { ...GAE, iterations: 1 }, rewardFunction: '', resume: { fromIter: 2 } }, 2);
    expect((await exported(peftOnly, 3)).weights).not.toEqual(want.weights);
  }, 120_000); // five runs on the float64 backend, each with its held-out evaluations before and after

  it('a training state that is not the adapter’s, or not one at all, is refused by name and the model keeps its adapter', async () => {
    const { s, of } = await opened();
    await s.train({ settings: { ...SMALL, estimator: 'gae', iterations: 1 }, rewardFunction: VOWELS }, 1);
    await s.exportAdapter(2, true);
    const one = of('hfAdapter')[0];
    await s.train({ settings: { ...SMALL, estimator: 'gae', iterations: 1 }, rewardFunction: VOWELS, resume: { fromIter: 1 } }, 3);
    await s.exportAdapter(4, true);
    const two = of('hfAdapter')[1];
    expect(one.state!.length).toBe(two.state!.length);

    // Refused on the session that holds `two`: the model keeps that adapter, state and all.
    await s.loadAdapter({ config: one.config!, weights: one.weights!, state: two.state! }, 5);
    expect(of('hfAdapterLoaded')[0].refusal).toMatch(/^the training state: its actor differs from the adapter's weights at element \d+/);
    await s.loadAdapter({ config: one.config!, weights: one.weights!, state: one.weights! }, 6);
    expect(of('hfAdapterLoaded')[1].refusal).toBe('the training state: format is "pt", not ppo-playground-lora-training-state');
    await s.loadAdapter({ config: one.config!, weights: one.weights!, state: new Uint8Array(3) }, 7);
    expect(of('hfAdapterLoaded')[2].refusal).toMatch(/^the training state: safetensors file truncated/);
    const decoded = decodeSafetensors(two.state!);
    const tensors = [...decoded.tensors].map(([name, t]) => ({ name, ...t }));
    await s.loadAdapter({ config: two.config!, weights: two.weights!, state: encodeSafetensors(tensors, { ...decoded.metadata, lora: '{"r":4}' }) }, 8);
    expect(of('hfAdapterLoaded')[3].refusal).toMatch(/^the training state: it belongs to another adapter \(\{"r":4\}\), not this one \(\{"r":2,/);
    await s.exportAdapter(9, true);
    expect(of('hfAdapter')[2].weights).toEqual(two.weights);
    expect(of('hfAdapter')[2].state).toEqual(two.state);
  });
});
