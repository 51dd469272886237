// The counts and limits the README and docs/ state about the code are the code's own: each sentence
// is matched and its number compared with the constant or list it describes, so a change to one
// fails here until the page says so. (The ops and kernels of docs/architecture.md: docs_op_counts.)
import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIND_GROUP_CACHE } from '../../src/gpu/recorder.ts';
import { forAdapter } from '../../src/gpu/pipelines.ts';
import { kernelsInOrder } from '../../src/worker/firstKernels.ts';
import { LOSS_MODES } from '../../src/reference/policyLoss.ts';
import { DEFAULT_CONFIG } from '../../src/rl/config.ts';
import settings from '../../src/i18n/locales/en/settings.json' with { type: 'json' };
import { ADVANTAGE_ESTIMATORS, GROUPS } from '../../src/rl/configKnobs.ts';
import { FORMULA_STEPS } from '../../src/rl/inspect/formulas.ts';
import { REWARD_FUNCTION_LIMITS } from '../../src/rl/rewardFunction/problem.ts';
import { LIGHT_PROMPTS_PER_BATCH } from '../../src/store/lightBatch.ts';

const root = resolve(import.meta.dirname, '../..');
/** A page's text with its line breaks folded, so a sentence matches wherever it wraps. */
const read = (file: string): string => readFileSync(resolve(root, file), 'utf8').replace(/\s+/g, ' ');
const WORDS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve'];

/** The numbers `re` captures in `file` (digits, digits with a thin space, or a word); fails when the sentence is gone. */
function stated(file: string, re: RegExp): number[] {
  const m = read(file).match(re);
  expect(m, `${file}: no match for ${re}`).not.toBeNull();
  return m!.slice(1).map((s) => (WORDS.includes(s) ? WORDS.indexOf(s) : Number(s.replace(/\s/g, ''))));
}

/** The backticked names between `from` and `to` in `file`. */
function namesBetween(file: string, from: string, to: string): string[] {
  const text = read(file);
  const start = text.indexOf(from);
  const end = text.indexOf(to, start);
  expect(start >= 0 && end > start, `${file}: no passage from "${from}" to "${to}"`).toBe(true);
  return [...text.slice(start, end).matchAll(/`([a-z0-9_.-]+)`/g)].map((m) => m[1]);
}

describe('docs/page.md', () => {
  it("the kernel count the bar shows while compiling (the first iteration's, on a CPU adapter)", () => {
    expect(stated('docs/page.md', /"compiling GPU kernels \d+ \/ (\d+)"/)).toEqual([forAdapter(kernelsInOrder().first, true).length]);
  });

  it('the stages of "Walk through this iteration"', () => {
    expect(stated('docs/page.md', /steps through the (\w+) stages/)).toEqual([FORMULA_STEPS.length]);
  });

  it('the limits of a reward you write', () => {
    const [callMs, batchS, sourceKiB] = stated('docs/page.md', /(\d+) ms a call, (\d+) s a batch, (\d+) KiB of source/);
    expect([callMs, batchS * 1000, sourceKiB * 1024]).toEqual([REWARD_FUNCTION_LIMITS.callMs, REWARD_FUNCTION_LIMITS.batchMs, REWARD_FUNCTION_LIMITS.maxSourceBytes]);
    expect(stated('docs/page.md', /each batch's calls are limited to (\d+) s/)).toEqual([REWARD_FUNCTION_LIMITS.batchMs / 1000]);
  });

  it('the lighter default batch on minimum buffer limits', () => {
    expect(stated('docs/page.md', /the default batch is (\d+) prompts instead of (\d+)/)).toEqual([LIGHT_PROMPTS_PER_BATCH, DEFAULT_CONFIG.promptsPerBatch]);
  });

  it('the settings groups, in order', () => {
    const listed = read('docs/page.md').match(/every knob, grouped \(([^)]*)\)/);
    expect(listed).not.toBeNull();
    expect(listed![1].split(', ')).toEqual(GROUPS.map((g) => settings.groups[g]));
  });

  it('every policy-loss mode and every outcome estimator, and no other', () => {
    const modes = namesBetween('docs/page.md', '**Policy loss**', '**Advantage estimator**').filter((n) => n !== 'policy_loss.loss_mode');
    expect(modes.sort()).toEqual([...LOSS_MODES].sort());
    const estimators = namesBetween('docs/page.md', '**Advantage estimator**', '**Rollout correction**');
    expect(estimators.sort()).toEqual(ADVANTAGE_ESTIMATORS.filter((e) => e !== 'gae').sort());
  });
});

describe('the languages', () => {
  it('are the locales the page ships', () => {
    expect(readdirSync(resolve(root, 'src/i18n/locales')).sort()).toEqual(['en', 'zh-CN']);
    expect(read('README.md')).toContain('The page is in English and Simplified Chinese');
    expect(read('docs/page.md')).toContain('Every word of the page is in English and Simplified Chinese');
  });
});

describe('docs/testing.md', () => {
  it('the slowest test files npm test lists', () => {
    const listed = readFileSync(resolve(root, 'scripts/test-all.mjs'), 'utf8').match(/fileTimes\.sort\(.*?\)\.slice\(0, (\d+)\)/);
    expect(listed).not.toBeNull();
    expect(stated('docs/testing.md', /the (\w+) slowest test files/)).toEqual([Number(listed![1])]);
  });

  it('names every package npm test installs', () => {
    const pkgs = [...readFileSync(resolve(root, 'scripts/test-all.mjs'), 'utf8').matchAll(/pkg: '([a-z0-9-]+)'/g)].map((m) => m[1]);
    expect(pkgs.length).toBeGreaterThan(0);
    const named = namesBetween('docs/testing.md', '## What `npm test` needs', '## Where the time goes');
    for (const pkg of pkgs) expect(named).toContain(pkg);
  });
});

describe('docs/decisions.md', () => {
  it('the bind-group cache size', () => {
    expect(stated('docs/decisions.md', /A bind-group cache of (\d[\d ]*\d), least recently used/)).toEqual([BIND_GROUP_CACHE]);
    expect(stated('docs/decisions.md', /an LRU of (\d[\d ]*\d) \(`src\/gpu\/recorder.ts`\)/)).toEqual([BIND_GROUP_CACHE]);
  });
});
