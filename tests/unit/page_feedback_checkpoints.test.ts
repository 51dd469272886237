// Page-side logic of the human-feedback view (which pairs are offered, labels accumulate) and of
// the checkpoint loader (which files are refused before they reach the worker, and why).
import { beforeEach, describe, expect, it } from 'vitest';
import { encodeSafetensors } from '../../src/model/safetensors.ts';
import { actorFileName, checkActorFile } from '../../src/store/checkpoints.ts';
import { useFeedback } from '../../src/store/feedback.ts';
import { candidatePairs, pairKey } from '../../src/store/feedbackPairs.ts';
import { getTask } from '../../src/tasks/index.ts';
import type { SampleRow } from '../../src/worker/protocol.ts';

const row = (prompt: string, response: string, reward = 0): SampleRow => ({ prompt, response, reward, endedWithEos: true, tokens: [] });

describe('candidate pairs', () => {
  const rows = [row('1+1=', '2'), row('3+4=', '7'), row('1+1=', '3'), row('1+1=', '2'), row('3+4=', '7'), row('5+5=', '10'), row('1+1=', '11')];

  it('pairs distinct responses to the same prompt, never a response with itself', () => {
    const pairs = candidatePairs(rows, new Set());
    // 1+1= has three distinct responses (2, 3, 11): three pairs; 3+4= has one distinct; 5+5= one row.
    expect(pairs.map((p) => [p.prompt, p.a.response, p.b.response])).toEqual([
      ['1+1=', '2', '3'],
      ['1+1=', '2', '11'],
      ['1+1=', '3', '11'],
    ]);
  });

  it('drops pairs already seen, in either order', () => {
    const seen = new Set([pairKey('1+1=', '3', '2')]);
    expect(candidatePairs(rows, seen).map((p) => p.key)).toEqual([pairKey('1+1=', '2', '11'), pairKey('1+1=', '11', '3')]);
    expect(pairKey('p', 'a', 'b')).toBe(pairKey('p', 'b', 'a'));
    expect(pairKey('p', 'a', 'b')).not.toBe(pairKey('q', 'a', 'b'));
  });

  it('offers nothing without at least two samples per prompt', () => {
    expect(candidatePairs([row('a', 'x'), row('b', 'y')], new Set())).toEqual([]);
    expect(candidatePairs([], new Set())).toEqual([]);
  });
});

describe('feedback store', () => {
  beforeEach(() => useFeedback.getState().clear());

  it('accumulates labels once per pair, and skipping or removing updates what is offered', () => {
    const f = () => useFeedback.getState();
    f().label({ prompt: '1+1=', chosen: '2', rejected: '3' });
    f().label({ prompt: '1+1=', chosen: '3', rejected: '2' }); // same pair: ignored
    f().label({ prompt: '1+1=', chosen: '2', rejected: '2' }); // not a pair: ignored
    expect(f().labels).toEqual([{ prompt: '1+1=', chosen: '2', rejected: '3' }]);
    f().skip('1+1=', '11', '2');
    const offered = candidatePairs([row('1+1=', '2'), row('1+1=', '3'), row('1+1=', '11')], f().seen);
    expect(offered.map((p) => [p.a.response, p.b.response])).toEqual([['3', '11']]);
    f().remove(0);
    expect(f().labels).toEqual([]);
    expect(candidatePairs([row('1+1=', '2'), row('1+1=', '3')], f().seen)).toHaveLength(1);
  });
});

describe('actor checkpoint check', () => {
  const arithmetic = getTask('arithmetic');
  const file = (meta: Record<string, string>) => encodeSafetensors([{ name: 'wte', dtype: 'F32', shape: [2], data: new Float32Array([0.5, -0.5]) }], meta);
  const cfg = (head: string) => JSON.stringify({ vocabSize: 3 + arithmetic.alphabet.length, nLayer: 1, nHead: 2, dModel: 32, maxSeq: 32, head });
  const good = { config: cfg('lm'), alphabet: arithmetic.alphabet, task: 'arithmetic', format_version: '1' };

  it('accepts an lm-head checkpoint of the same task', () => {
    expect(checkActorFile(file(good), 'arithmetic')).toBeNull();
  });

  it('refuses with a reason: other task, reward head, missing metadata, garbage', () => {
    expect(checkActorFile(file(good), 'sentiment')).toMatch(/task "arithmetic".*differ from task "sentiment"/);
    expect(checkActorFile(file({ ...good, config: cfg('reward') }), 'arithmetic')).toMatch(/reward-head model/);
    const { alphabet: _drop, ...noAlphabet } = good;
    expect(checkActorFile(file(noAlphabet), 'arithmetic')).toMatch(/missing "alphabet"/);
    expect(checkActorFile(new TextEncoder().encode('not a safetensors file at all'), 'arithmetic')).toEqual(expect.any(String));
    expect(checkActorFile(new Uint8Array(0), 'arithmetic')).toEqual(expect.any(String));
  });

  it('names exports after task and iteration', () => {
    expect(actorFileName('sentiment', 42)).toBe('ppo-actor-sentiment-iter42.safetensors');
  });
});
