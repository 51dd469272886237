// A reward function in a shared link is someone else's code: it is held out of the config until
// the visitor accepts it, while the page's own functions (default, presets') and the one already in
// force need no acceptance; Start waits with a reason while one is held or its check failed. A
// learned reward model on a task without one is refused when it is set, naming the allowed values.
import { beforeAll, describe, expect, it } from 'vitest';
import { loadNamespaces } from '../../src/i18n/index.ts';
import { checked, DEFAULT_CONFIG, DEFAULT_REWARD_FUNCTION, validateConfig, type PpoConfig } from '../../src/rl/config.ts';
import { createAppStore } from '../../src/store/appStore.ts';
import { needsAcceptance, rewardFunctionBlock, SHIPPED_REWARD_FUNCTIONS } from '../../src/store/rewardFunctionLink.ts';
import { startBlockedBy, syncRewardFunction } from '../../src/store/rewardFunctionSync.ts';
import { configToQuery, parseQuery } from '../../src/store/urlConfig.ts';
import { withLabels } from '../../src/ui/fieldProblems.ts';
import { pairCountText } from '../../src/ui/teach/feedbackText.ts';

const FOREIGN = '(prompt, response) => response.length';
const link = (params: Record<string, string>) => `?${new URLSearchParams(params).toString()}`;

describe('a reward function that arrives in a link', () => {
  it('is held for acceptance, out of the config, with the rest of the link applied', () => {
    const p = parseQuery(link({ task: 'sentiment', rewardSource: 'function', rewardFunction: FOREIGN }));
    expect(p.pendingRewardFunction).toBe(FOREIGN);
    expect(p.config.rewardFunction).toBe(DEFAULT_CONFIG.rewardFunction);
    expect(p.config.rewardSource).toBe('function');
    expect(p.config.task).toBe('sentiment');
    expect(p.applied).not.toContain('rewardFunction');
    expect(p.problems).toEqual([]);
  });

  it('needs no acceptance when it ships with the page or is already in force', () => {
    expect(SHIPPED_REWARD_FUNCTIONS.has(DEFAULT_REWARD_FUNCTION)).toBe(true);
    expect(needsAcceptance(DEFAULT_REWARD_FUNCTION, FOREIGN)).toBe(false);
    expect(needsAcceptance(FOREIGN, FOREIGN)).toBe(false);
    expect(needsAcceptance(FOREIGN, DEFAULT_REWARD_FUNCTION)).toBe(true);
    // One character more is another function.
    expect(needsAcceptance(`${DEFAULT_REWARD_FUNCTION} `, DEFAULT_REWARD_FUNCTION)).toBe(true);
    const own = parseQuery(link({ rewardSource: 'function', rewardFunction: FOREIGN }), checked({ ...DEFAULT_CONFIG, rewardFunction: FOREIGN }));
    expect(own.pendingRewardFunction).toBeNull();
    expect(own.config.rewardFunction).toBe(FOREIGN);
  });

  it('an oversize function in a link is refused with the field and the limit', () => {
    const p = parseQuery(link({ rewardSource: 'function', rewardFunction: `(p, r) => 1 // ${'x'.repeat(9000)}` }));
    expect(p.pendingRewardFunction).toBeNull();
    expect(p.problems).toEqual(['rewardFunction: 9015 bytes; allowed: at most 8192 bytes']);
  });

  it('travels in the link only with Reward source = function, and round-trips exactly', () => {
    expect(configToQuery(DEFAULT_CONFIG)).not.toContain('rewardFunction');
    const c = { ...DEFAULT_CONFIG, task: 'sentiment' as const, rewardSource: 'function' as const, rewardFunction: FOREIGN };
    const back = parseQuery(`?${configToQuery(c)}`, checked(c));
    expect(back.config).toEqual(c);
    expect(back.pendingRewardFunction).toBeNull();
  });

  it('holds Start until the visitor accepts; "Keep mine" drops it; accepting puts it in the config', () => {
    const store = createAppStore();
    store.getState().applyConfig({ ...DEFAULT_CONFIG, rewardSource: 'function' });
    store.getState().setPendingRewardFunction(FOREIGN);
    expect(startBlockedBy(store.getState())).toMatch(/came with the link: read it and answer “Run this reward function\?”/);
    expect(store.getState().acceptRewardFunction()).toEqual([]);
    expect(store.getState().config.rewardFunction).toBe(FOREIGN);
    expect(store.getState().pendingRewardFunction).toBeNull();
    expect(startBlockedBy(store.getState())).toBeNull();
    // With Reward source = rule the function does not run, so it holds nothing.
    expect(rewardFunctionBlock({ ...DEFAULT_CONFIG, rewardSource: 'rule' }, FOREIGN, null)).toBeNull();
  });

  it('holds Start while the check of the function in force failed, naming the problem; a check of another function does not', () => {
    const c = { ...DEFAULT_CONFIG, rewardSource: 'function' as const, rewardFunction: FOREIGN };
    const problem = { kind: 'not-a-number' as const, message: 'the call returned NaN; allowed: a finite number', sample: { prompt: 'a', response: 'b' } };
    expect(rewardFunctionBlock(c, null, { source: FOREIGN, problem })).toBe(
      'The reward function was refused on a sample (the call returned NaN; allowed: a finite number): edit it under Settings before Start.',
    );
    expect(rewardFunctionBlock(c, null, { source: 'older', problem })).toBeNull();
    expect(rewardFunctionBlock(c, null, { source: FOREIGN, score: 1 })).toBeNull();
  });
});

describe('editing the reward function of a run in progress', () => {
  it('goes to the worker with the run’s own config and into the run record; a refusal shown for the old function is cleared', () => {
    const store = createAppStore();
    const sent: PpoConfig[] = [];
    syncRewardFunction(store, (c) => {
      sent.push(c);
      return true;
    });
    store.getState().applyConfig({ ...DEFAULT_CONFIG, task: 'sentiment', rewardSource: 'function' });
    const run = store.getState().beginRun();
    store.getState().setRewardFailure({ kind: 'threw', message: 'the call threw Error: x', iter: 3, source: DEFAULT_REWARD_FUNCTION });
    // A knob for the next run changes meanwhile: it must not reach the run in progress.
    store.getState().setField('seed', 9);
    store.getState().setField('rewardFunction', FOREIGN);
    expect(sent).toEqual([{ ...run.config, rewardFunction: FOREIGN }]);
    expect(store.getState().runs[0].config.rewardFunction).toBe(FOREIGN);
    expect(store.getState().runs[0].config.seed).toBe(DEFAULT_CONFIG.seed);
    expect(store.getState().rewardFailure).toBeNull();
  });

  it('a run that trains with another reward source is not touched', () => {
    const store = createAppStore();
    const sent: PpoConfig[] = [];
    syncRewardFunction(store, (c) => {
      sent.push(c);
      return true;
    });
    store.getState().beginRun();
    store.getState().setField('rewardFunction', FOREIGN);
    expect(sent).toEqual([]);
    expect(store.getState().runs[0].config.rewardFunction).toBe(DEFAULT_REWARD_FUNCTION);
  });
});

describe('a learned reward model on a task without one', () => {
  it('is refused when set, naming the field and the values allowed with the task', () => {
    const [p] = validateConfig({ ...DEFAULT_CONFIG, task: 'arithmetic', rewardSource: 'model' });
    expect(p.field).toBe('rewardSource');
    expect(withLabels(p.message)).toBe(
      'Reward source = "model": task arithmetic has no learned reward model; allowed with it: "rule", "function" (a learned reward model: task sentiment)',
    );
    // Switching the task of "Reward hacking without KL" (sentiment + model) is refused the same way: the store keeps its config.
    const store = createAppStore();
    store.getState().applyConfig({ ...DEFAULT_CONFIG, task: 'sentiment', rewardSource: 'model' });
    expect(
      store
        .getState()
        .setField('task', 'arithmetic')
        .map((x) => x.field),
    ).toEqual(['rewardSource']);
    expect(store.getState().config.task).toBe('sentiment');
    // A link asking for it drops the conflicting value and says so.
    const parsed = parseQuery('?task=stop&rewardSource=model');
    expect(parsed.config.rewardSource).toBe('rule');
    expect(parsed.problems.join()).toMatch(/task stop has no learned reward model/);
  });
});

describe('the Human feedback view says how many pairs and why', () => {
  beforeAll(() => loadNamespaces(['teach']));
  it('counts prompts × responses, distinct pairs and those done', () => {
    const row = (prompt: string, response: string) => ({ prompt, response, reward: 0, endedWithEos: true, tokens: [] });
    const rows = [row('a', 'x'), row('a', 'y'), row('a', 'x'), row('b', 'z'), row('b', 'z'), row('b', 'z')].slice(0, 6);
    expect(pairCountText(rows, 0)).toBe(
      'The latest rollout has 2 prompts × 3 responses. Only two different responses to the same prompt make a pair (identical ones cannot be compared), which gives 1 pair; 1 already labelled or skipped, 0 left.',
    );
  });
});
