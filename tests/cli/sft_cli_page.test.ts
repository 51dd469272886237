// The page's SFT and `npm run pretrain` are one run: the worker's trainSft command (the host on the
// float64 CPU backend) and the CLI, given the same task, seed, size and reduced step count
// (--phase-steps, the option both share), write the same safetensors bytes; and the model the
// command made is the actor the next trainer starts from. A cancelled run leaves the actor as it was.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCheckpoint } from '../../src/model/checkpoint.ts';
import { DEFAULT_CONFIG } from '../../src/rl/config.ts';
import { tinyActor, workerHarness } from '../helpers/workerHarness.ts';

const DIMS = { nLayer: 1, nHead: 4, dModel: 32 };
const SEED = 3;
const PHASE_STEPS = 3;

function pageHarness() {
  return workerHarness({ patience: 100_000, fetchCheckpoint: async (stem) => tinyActor(stem, 1) });
}

describe('SFT in the tab = npm run pretrain', () => {
  it('writes the same bytes as the CLI for the same task, seed and size, and becomes the actor', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sft-cli-'));
    const out = join(dir, 'cli.safetensors');
    execFileSync(
      'npx',
      [
        'tsx',
        'src/cli/pretrain.ts',
        '--task',
        'arithmetic',
        '--seed',
        String(SEED),
        '--layers',
        '1',
        '--heads',
        '4',
        '--width',
        '32',
        '--phase-steps',
        String(PHASE_STEPS),
        '--out',
        out,
      ],
      { stdio: 'pipe', timeout: 100_000 },
    );
    const cli = new Uint8Array(readFileSync(out));

    const h = pageHarness();
    await h.send({ type: 'init', backend: 'cpu' });
    await h.send({ type: 'setConfig', config: { ...DEFAULT_CONFIG, task: 'arithmetic', seed: SEED, ...DIMS } });
    await h.send({ type: 'trainSft', requestId: 7, dims: DIMS, phaseSteps: PHASE_STEPS });
    const [done] = h.of('sftDone');
    expect(h.of('error')).toEqual([]);
    expect(done.requestId).toBe(7);
    expect(done.meta).toEqual({ task: 'arithmetic', ...DIMS, seed: SEED, steps: 2 * PHASE_STEPS, backend: expect.stringContaining('CPU') });
    const page = new Uint8Array(done.bytes!);
    expect(page.length).toBe(cli.length);
    expect(Buffer.compare(Buffer.from(page), Buffer.from(cli))).toBe(0);

    // Progress reached the last step of both phases, and each phase was evaluated on held-out prompts.
    const progress = h.of('sftProgress');
    expect(progress.at(-1)).toMatchObject({ doneSteps: 2 * PHASE_STEPS, totalSteps: 2 * PHASE_STEPS, phases: 2 });
    expect(h.of('sftPhaseEval').map((e) => e.phase)).toEqual([0, 1]);
    expect(Object.keys(h.of('sftPhaseEval')[0].metrics)).toContain('accuracy');

    // The next trainer is built from the SFT model: its snapshot before any iteration is those bytes.
    await h.send({ type: 'snapshot', requestId: 8 });
    const snap = h.of('snapshot').at(-1)!;
    expect(Buffer.compare(Buffer.from(new Uint8Array(snap.bytes)), Buffer.from(cli))).toBe(0);
    await h.send({ type: 'step' });
    expect(h.of('metrics').length).toBe(1);
    await h.send({ type: 'snapshot', requestId: 9 });
    expect(parseCheckpoint(new Uint8Array(h.of('snapshot').at(-1)!.bytes)).config).toMatchObject(DIMS);

    // Back to the shipped model: the next trainer's actor is the shipped file again.
    await h.send({ type: 'useShippedActor', task: 'arithmetic' });
    await h.send({ type: 'prepare' });
    await h.send({ type: 'snapshot', requestId: 10 });
    const shipped = h.of('snapshot').at(-1)!;
    expect(Buffer.compare(Buffer.from(new Uint8Array(shipped.bytes)), Buffer.from(await tinyActor('arithmetic', 1)))).toBe(0);
  });

  it('a cancelled SFT answers cancelled and leaves the actor as it was', async () => {
    const h = workerHarness({
      patience: 100_000,
      fetchCheckpoint: async (stem) => tinyActor(stem, 1),
      // Cancel as soon as the first loss is reported (before the run's next step).
      onPost: (m, host) => {
        if (m.type === 'sftProgress') void host.handle({ type: 'cancelSft' });
      },
    });
    await h.send({ type: 'init', backend: 'cpu' });
    await h.send({ type: 'setConfig', config: { ...DEFAULT_CONFIG, task: 'arithmetic', seed: SEED } });
    await h.send({ type: 'trainSft', requestId: 1, dims: DIMS, phaseSteps: 50 });
    const [done] = h.of('sftDone');
    expect(done).toMatchObject({ requestId: 1, cancelled: true });
    expect(done.bytes).toBeUndefined();
    expect(h.of('sftProgress').at(-1)!.doneSteps).toBeLessThan(100);
    await h.send({ type: 'prepare' });
    await h.send({ type: 'snapshot', requestId: 2 });
    expect(h.of('error')).toEqual([]);
    expect(Buffer.compare(Buffer.from(new Uint8Array(h.of('snapshot').at(-1)!.bytes)), Buffer.from(await tinyActor('arithmetic', 1)))).toBe(0);
  });
});
