// The worker's capture switch with the real PpoTrainer (float64 CPU backend, tiny model): while
// `setCapture` is on, each iteration of a step or of the run loop posts a `trace` whose trace is the
// trainer's own (the same iteration driven directly), with its prompts and token text decoded by
// the task's tokenizer; off, nothing more is posted. The message's buffers transfer.
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, type PpoConfig } from '../../src/rl/config.ts';
import { PpoTrainer } from '../../src/rl/trainer.ts';
import { getTask, taskTokenizer } from '../../src/tasks/index.ts';
import { traceMessage } from '../../src/worker/traceMessage.ts';
import { cpuBackend } from '../helpers/backends.ts';
import { rng } from '../helpers/random.ts';
import { tinyShipped, workerHarness } from '../helpers/workerHarness.ts';

const config: PpoConfig = {
  ...DEFAULT_CONFIG,
  task: 'stop',
  promptsPerBatch: 2,
  samplesPerPrompt: 2,
  maxResponseLength: 4,
  ppoEpochs: 2,
  miniBatches: 2,
  advantageEstimator: 'gae',
};

describe('worker capture (cpu)', () => {
  it("setCapture on: a step and the run loop post each iteration's trace; off: none", async () => {
    const shipped = tinyShipped(rng(61).int(0, 1e6));
    const h = workerHarness({ fetchCheckpoint: shipped, patience: 60_000, pollEvery: 5 });
    await h.send({ type: 'init', backend: 'cpu' });
    await h.send({ type: 'setConfig', config });
    await h.send({ type: 'step' });
    expect(h.of('trace')).toEqual([]);
    await h.send({ type: 'setCapture', on: true });
    await h.send({ type: 'step' });
    await h.untilMessages('trace', 1);
    await h.send({ type: 'start', untilIter: 4 });
    await h.untilMessages('finished');
    await h.send({ type: 'setCapture', on: false });
    await h.send({ type: 'step' });
    await h.untilMessages('metrics', 5);
    expect(h.of('error')).toEqual([]);
    const traces = h.of('trace');
    expect(traces.map((t) => t.iter)).toEqual([1, 2, 3]);

    // The same iterations driven directly, capturing from the second on.
    const direct = await PpoTrainer.create({ be: cpuBackend, config, actorCheckpoint: await shipped('stop') });
    try {
      await direct.iteration();
      for (const posted of traces) {
        const r = await direct.iteration({ capture: true, sampleNext: posted.iter < 3 });
        expect(posted.trace).toEqual(r.trace);
        expect(posted.prompts).toEqual(r.prompts);
      }
    } finally {
      direct.dispose();
    }

    const tok = taskTokenizer(getTask('stop'));
    for (const { trace, prompts, tokenText } of traces) {
      expect(prompts.length).toBe(trace.B);
      expect(tokenText.length).toBe(trace.B * trace.A);
      trace.responseTokens.forEach((id, i) => {
        const special = new Map([
          [tok.padId, ''],
          [tok.eosId, '<eos>'],
          [tok.bosId, '<bos>'],
        ]);
        expect(tokenText[i]).toBe(special.get(id) ?? tok.decode([id]));
      });
    }
  });

  it("captureLast: capture off, a start captures only its budget's last iteration", async () => {
    const h = workerHarness({ fetchCheckpoint: tinyShipped(rng(63).int(0, 1e6)), patience: 60_000, pollEvery: 5 });
    await h.send({ type: 'init', backend: 'cpu' });
    await h.send({ type: 'setConfig', config });
    await h.send({ type: 'start', untilIter: 3, captureLast: true });
    await h.untilMessages('finished');
    // Training on past the budget without it captures nothing more.
    await h.send({ type: 'start', untilIter: 4 });
    await h.untilMessages('finished', 2);
    expect(h.of('error')).toEqual([]);
    expect(h.of('metrics').map((m) => m.iter)).toEqual([0, 1, 2, 3]);
    expect(h.of('trace').map((t) => t.iter)).toEqual([2]);
  });

  it('a trace message clones with its buffers transferred, each once', async () => {
    const t = await PpoTrainer.create({ be: cpuBackend, config, actorCheckpoint: await tinyShipped(rng(62).int(0, 1e6))('stop') });
    try {
      const r = await t.iteration({ capture: true });
      const before = structuredClone(r.trace);
      const { msg, transfer } = traceMessage('stop', r.iter, r.trace!, r.prompts!);
      expect(transfer.length).toBeGreaterThan(8);
      const received = structuredClone(msg, { transfer });
      expect(received.trace).toEqual(before);
      expect(r.trace!.oldLogprobs.length).toBe(0); // detached: moved, not copied
    } finally {
      t.dispose();
    }
  });
});
