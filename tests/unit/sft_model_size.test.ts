// The page's rules for the "1 · SFT" stage: which knobs differ from the model that trains and the
// sentence saying so, the header's words, the time estimates, the checks on a kept SFT record's
// metadata, the model-size rules the CLI shares, the phases a reduced run follows, and the
// exports naming the model that trained rather than the knobs.
import { describe, expect, it } from 'vitest';
import { buildJob } from '../../src/export/job.ts';
import { playgroundModelText } from '../../src/export/plan.ts';
import { DEFAULT_CONFIG } from '../../src/rl/config.ts';
import { modelDimsProblems, sftPhases } from '../../src/rl/sftRun.ts';
import { actorLabel, formatSeconds, mismatchedKnobs, mismatchMessage, sftEtaSeconds, sftMetaProblem, sftSecondsEstimate, SHIPPED_DIMS } from '../../src/store/modelSize.ts';

const M = { nLayer: 4, nHead: 4, dModel: 128 };
const CLI_NAMES = { nLayer: '--layers', nHead: '--heads', dModel: '--width' };

describe('model knobs against the model that trains', () => {
  it('names exactly the knobs that differ, with both values', () => {
    expect(mismatchedKnobs({ ...SHIPPED_DIMS }, SHIPPED_DIMS)).toEqual([]);
    expect(mismatchedKnobs({ nLayer: 2, nHead: 4, dModel: 128 }, SHIPPED_DIMS)).toEqual([
      { label: 'Attention heads', set: 4, model: 2 },
      { label: 'Model width', set: 128, model: 64 },
    ]);
  });

  it('says which model Start would train, or nothing when the knobs match it', () => {
    expect(mismatchMessage(DEFAULT_CONFIG, { origin: 'shipped', dims: SHIPPED_DIMS })).toBeNull();
    const msg = mismatchMessage({ ...DEFAULT_CONFIG, ...M }, { origin: 'shipped', dims: SHIPPED_DIMS });
    expect(msg).toBe('Start would train the shipped SFT model, 2 × 2 × 64, not the size set here: Layers 4 (model: 2), Attention heads 4 (model: 2), Model width 128 (model: 64).');
    expect(mismatchMessage(DEFAULT_CONFIG, { origin: 'tab', dims: M })).toContain('the SFT model trained in this tab, 4 × 4 × 128');
    expect(mismatchMessage({ ...DEFAULT_CONFIG, ...M }, { origin: 'tab', dims: M })).toBeNull();
  });

  it('the header names size and origin', () => {
    expect(actorLabel({ origin: 'shipped', dims: SHIPPED_DIMS })).toBe('shipped 2 × 2 × 64');
    expect(actorLabel({ origin: 'tab', dims: M })).toBe('model 4 × 4 × 128, SFT in this tab');
    expect(actorLabel({ origin: 'file', dims: M })).toBe('model 4 × 4 × 128, loaded from a file');
  });
});

describe('SFT time estimates', () => {
  it('estimate = measured step time × recipe steps, rounded up; nothing without a measurement', () => {
    expect(sftSecondsEstimate(0.05, 900)).toBe(45);
    expect(sftSecondsEstimate(0.0501, 900)).toBe(46);
    expect(sftSecondsEstimate(0, 900)).toBe(0);
    expect(sftSecondsEstimate(Number.NaN, 900)).toBe(0);
  });

  it('ETA extrapolates the pace so far; none before the first step', () => {
    expect(sftEtaSeconds(0, 900, 3)).toBeNull();
    expect(sftEtaSeconds(300, 900, 30)).toBeCloseTo(60, 12);
    expect(sftEtaSeconds(900, 900, 90)).toBe(0);
    expect(sftEtaSeconds(10, 5, 1)).toBeNull();
  });

  it('formats seconds as the page says them', () => {
    expect(formatSeconds(40.4)).toBe('40 s');
    expect(formatSeconds(125)).toBe('2 min 5 s');
    expect(formatSeconds(120)).toBe('2 min');
  });
});

describe('kept SFT metadata', () => {
  const good = { task: 'arithmetic', ...M, seed: 1, steps: 900, backend: 'webgpu' };
  it('accepts a run that the worker describes', () => {
    expect(sftMetaProblem(good)).toBeNull();
  });
  it('names the field and the allowed range of a bad one', () => {
    expect(sftMetaProblem(null)).toBe('the SFT record has no metadata');
    expect(sftMetaProblem({ ...good, task: 'chess' })).toBe('task = "chess": expected one of arithmetic, sentiment, stop');
    expect(sftMetaProblem({ ...good, dModel: 512 })).toBe('Model width = 512: expected an integer from 32 to 256');
    expect(sftMetaProblem({ ...good, nLayer: 1.5 })).toBe('Layers = 1.5: expected an integer from 1 to 6');
    expect(sftMetaProblem({ ...good, steps: -1 })).toBe('steps = -1: expected a non-negative integer');
    expect(sftMetaProblem({ ...good, backend: 3 })).toContain('backend');
  });
});

describe('model size rules shared by the page and npm run pretrain', () => {
  it('names the flag and its range', () => {
    expect(modelDimsProblems(M, CLI_NAMES)).toEqual([]);
    expect(modelDimsProblems({ ...M, nLayer: 7 }, CLI_NAMES)).toEqual(['--layers = 7: expected an integer from 1 to 6']);
    expect(modelDimsProblems({ ...M, dModel: Number.NaN }, CLI_NAMES)).toEqual(['--width = NaN: expected an integer from 32 to 256']);
    expect(modelDimsProblems({ nLayer: 2, nHead: 3, dModel: 64 }, CLI_NAMES)).toEqual(['--heads = 3: must divide --width (64)']);
    // The knobs allow 2 heads at width 256; the attention kernel does not (128 per head).
    expect(modelDimsProblems({ nLayer: 2, nHead: 2, dModel: 256 }, CLI_NAMES)).toEqual(["--width / --heads = 128: at most 64 per head (the attention kernel's limit)"]);
  });

  it('a reduced run caps every phase and keeps the recipe otherwise', () => {
    const full = sftPhases({ task: 'arithmetic' });
    expect(full.map((p) => p.steps)).toEqual([600, 300]);
    expect(sftPhases({ task: 'arithmetic', phaseSteps: 5 }).map((p) => p.steps)).toEqual([5, 5]);
    expect(sftPhases({ task: 'arithmetic', lastPhase: { steps: 40, lr: 5e-4 } }).map((p) => [p.steps, p.lr])).toEqual([
      [600, 3e-3],
      [40, 5e-4],
    ]);
  });
});

describe('exports describe the model that trained', () => {
  it('names its size and origin, not the knobs', () => {
    expect(playgroundModelText()).toBe('a 2-layer, 2-head, d_model 64 character transformer (the shipped SFT checkpoint, made by npm run pretrain)');
    const config = { ...DEFAULT_CONFIG, nLayer: 6, nHead: 8, dModel: 256 };
    for (const engine of ['verl', 'openrlhf'] as const) {
      const job = buildJob(config, { engine, gpus: 1, trainRows: 64, actor: { origin: 'tab', dims: M } });
      const text = job.files
        .filter((f) => /\.(sh|md)$/.test(f.path))
        .map((f) => new TextDecoder().decode(f.data))
        .join('\n');
      expect(text).toContain('a 4-layer, 4-head, d_model 128 character transformer (SFT in the tab); its settings asked for 6 layers, 8 heads, d_model 256, which did not apply');
      expect(text).not.toContain('6-layer');
      const matching = buildJob({ ...DEFAULT_CONFIG, ...M }, { engine, gpus: 1, trainRows: 64, actor: { origin: 'tab', dims: M } });
      expect(new TextDecoder().decode(matching.files.find((f) => f.path.endsWith('.md'))!.data)).not.toContain('did not apply');
    }
  });
});
