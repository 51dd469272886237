// Properties every task must have: determinism, alphabet closure, size limits, registry lookup.
import { describe, expect, it } from 'vitest';
import { CharTokenizer } from '../../src/model/tokenizer.ts';
import { getTask, TASK_NAMES, TASKS_BY_NAME, taskTokenizer } from '../../src/tasks/index.ts';
import { Rng } from '../../src/util/rng.ts';

const N = 2000;

describe.each(TASK_NAMES)('task %s', (name) => {
  const task = getTask(name);

  it('is registered under its own name, with UI text and a small vocabulary', () => {
    expect(TASKS_BY_NAME[name]).toBe(task);
    expect(task.name).toBe(name);
    expect(task.title.length).toBeGreaterThan(0);
    expect(task.description.length).toBeGreaterThan(20);
    expect(taskTokenizer(task).vocabSize).toBeLessThanOrEqual(40);
    expect(task.maxPromptChars).toBeLessThanOrEqual(16);
    expect(task.maxResponseChars).toBeLessThanOrEqual(name === 'sentiment' ? 24 : 16);
  });

  it('is deterministic for a seed and varies across seeds', () => {
    const draw = (seed: number) => {
      const r = new Rng(seed);
      return Array.from({ length: 50 }, () => [task.trainPrompt(r), JSON.stringify(task.sftExample(r))]);
    };
    expect(draw(5)).toEqual(draw(5));
    expect(draw(5)).not.toEqual(draw(6));
    expect(task.evalPrompts(40)).toEqual(task.evalPrompts(40));
    expect(task.evalPrompts(10)).toEqual(task.evalPrompts(40).slice(0, 10));
    expect(task.evalPrompts(0)).toEqual([]);
  });

  it('only produces strings its tokenizer encodes, within the length limits', () => {
    const tok = new CharTokenizer(task.alphabet);
    const r = new Rng(9);
    const prompts = [...task.evalPrompts(300), ...Array.from({ length: N }, () => task.trainPrompt(r))];
    const examples = Array.from({ length: N }, () => task.sftExample(r));
    if (task.preferencePair) {
      for (let i = 0; i < 300; i++) {
        const p = task.preferencePair(r);
        prompts.push(p.prompt);
        examples.push({ prompt: p.prompt, response: p.chosen }, { prompt: p.prompt, response: p.rejected });
      }
    }
    for (const p of [...prompts, ...examples.map((e) => e.prompt)]) {
      expect(p.length).toBeGreaterThan(0);
      expect(p.length).toBeLessThanOrEqual(task.maxPromptChars);
      expect(tok.decode(tok.encode(p))).toBe(p);
    }
    for (const e of examples) {
      expect(e.response.length).toBeGreaterThan(0);
      expect(e.response.length).toBeLessThanOrEqual(task.maxResponseChars);
      expect(tok.decode(tok.encode(e.response))).toBe(e.response);
    }
  });

  it('has an SFT recipe whose every phase corpus is deterministic and encodable within the limits', () => {
    expect(task.sftRecipe.length).toBeGreaterThan(0);
    const tok = new CharTokenizer(task.alphabet);
    for (const phase of task.sftRecipe) {
      expect(phase.label.length, 'phase label').toBeGreaterThan(3);
      expect(Number.isInteger(phase.steps) && phase.steps > 0, `${phase.label}: steps ${phase.steps}`).toBe(true);
      expect(Number.isInteger(phase.batchSize) && phase.batchSize > 0, `${phase.label}: batch ${phase.batchSize}`).toBe(true);
      expect(phase.lr > 0 && phase.lr < 0.1, `${phase.label}: lr ${phase.lr}`).toBe(true);
      const draw = (seed: number) => {
        const r = new Rng(seed);
        return Array.from({ length: 300 }, () => (phase.example ? phase.example(r) : task.sftExample(r)));
      };
      expect(draw(3)).toEqual(draw(3));
      for (const e of draw(4)) {
        expect(e.prompt.length).toBeGreaterThan(0);
        expect(e.prompt.length).toBeLessThanOrEqual(task.maxPromptChars);
        expect(e.response.length).toBeGreaterThan(0);
        expect(e.response.length).toBeLessThanOrEqual(task.maxResponseChars);
        expect(tok.decode(tok.encode(e.prompt + e.response))).toBe(e.prompt + e.response);
      }
    }
  });

  it('gives finite rule scores and metrics, also for degenerate samples (empty, no EOS, empty batch)', () => {
    const r = new Rng(2);
    const samples = Array.from({ length: 30 }, (_, i) => {
      const e = task.sftExample(r);
      return { ...e, response: i % 3 === 0 ? '' : e.response, endedWithEos: i % 2 === 0 };
    });
    for (const s of samples) expect(Number.isFinite(task.ruleScore(s))).toBe(true);
    for (const batch of [samples, []]) {
      const m = task.evaluate(batch);
      expect(Object.keys(m).length).toBeGreaterThan(0);
      for (const v of Object.values(m)) expect(Number.isFinite(v)).toBe(true);
    }
  });
});

describe('getTask', () => {
  it('names the available tasks when the name is unknown (including prototype keys)', () => {
    expect(() => getTask('chess')).toThrow('unknown task "chess" (available: arithmetic, sentiment, stop)');
    expect(() => getTask('toString')).toThrow(/unknown task "toString"/);
  });
});
