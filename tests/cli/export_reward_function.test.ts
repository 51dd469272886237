// A reward function written in the playground, in the exported job: the shipped one goes into
// reward.py as its hand-written Python twin, which python3 scores exactly as the JavaScript does in
// the sandbox; any other function is not translated, and reward.py, the README and both launch
// scripts say why. The scripts describe the model that trained, not the size knobs.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataSource } from '../../src/export/dataset.ts';
import { buildJob } from '../../src/export/job.ts';
import { rewardPy } from '../../src/export/rewardPy.ts';
import { UNTRANSLATED_WHY } from '../../src/export/rewardFunctionPy.ts';
import { DEFAULT_CONFIG, DEFAULT_REWARD_FUNCTION, type PpoConfig } from '../../src/rl/config.ts';
import { loadRewardSandbox, type RewardSandbox, scoreWithFunction } from '../../src/rl/rewardFunction/sandbox.ts';
import { finalScores } from '../../src/rl/score.ts';
import { sentenceEnding } from '../../src/tasks/sentiment.ts';
import type { TaskSample } from '../../src/tasks/task.ts';
import { Rng } from '../../src/util/rng.ts';

const dir = mkdtempSync(join(tmpdir(), 'export-reward-fn-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let sandbox: RewardSandbox;
beforeAll(async () => {
  sandbox = await loadRewardSandbox();
});

const FN: PpoConfig = { ...DEFAULT_CONFIG, task: 'sentiment', rewardSource: 'function', rewardFunction: DEFAULT_REWARD_FUNCTION, scoreClip: 2.5, noEosPenalty: -1 };
const OWN = '(prompt, response) => response.length';
const text = (f: { data: Uint8Array }) => new TextDecoder().decode(f.data);
const file = (c: PpoConfig, engine: 'verl' | 'openrlhf', path: string) => text(buildJob(c, { engine, gpus: 1, trainRows: 16 }).files.find((f) => f.path === path)!);

/** Endings that say "good" 0 to 5 times, some glued ("goodgood"), with and without EOS. */
function samples(rng: Rng, n: number): TaskSample[] {
  const words = ['good', 'goodgood', 'great', 'bad', 'go od', 'and'];
  return Array.from({ length: n }, (_, i) => ({
    prompt: 'the food was',
    response: i % 3 === 0 ? sentenceEnding(rng, 'positive') : ` ${Array.from({ length: rng.int(0, 6) }, () => words[rng.int(0, words.length)]).join(' ')}.`,
    endedWithEos: rng.next() < 0.7,
  }));
}

describe('a written reward function in the exported job', () => {
  it.each(['verl', 'openrlhf'] as const)('%s: the shipped function is its Python twin, scoring exactly as the sandbox', (engine) => {
    const batch = samples(new Rng(0x600d), 200);
    const raw = scoreWithFunction(sandbox, FN.rewardFunction, batch);
    const expected = Array.from(finalScores(raw, batch, FN.scoreClip, FN.noEosPenalty));
    expect(new Set(raw).size).toBeGreaterThanOrEqual(3); // 0, 1, 2, 3 "good"s: the cap is exercised
    expect(Math.max(...raw)).toBe(3);
    const py = rewardPy(FN, engine);
    expect(py).toContain('response.count("good")');
    const rewardFile = join(dir, `reward_${engine}.py`);
    const cases = join(dir, `cases_${engine}.json`);
    writeFileSync(rewardFile, py);
    writeFileSync(cases, JSON.stringify(batch.map((s) => [s.response, s.endedWithEos])));
    const driver = `
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("reward", sys.argv[1])
reward = importlib.util.module_from_spec(spec)
spec.loader.exec_module(reward)
print(json.dumps([reward.compute_score(${JSON.stringify(dataSource('sentiment'))}, r, "", {"ended_with_eos": e}) for r, e in json.load(open(sys.argv[2]))]))
`;
    const r = spawnSync('python3', ['-I', '-c', driver, rewardFile, cases], { encoding: 'utf8', timeout: 60_000 });
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual(expected);
  });

  it.each(['verl', 'openrlhf'] as const)('%s: a function of your own is not translated, and reward.py, the README and the script say why', (engine) => {
    const c = { ...FN, rewardFunction: OWN };
    expect(file(c, engine, 'reward.py')).toContain(`NOTE: ${UNTRANSLATED_WHY}.`);
    expect(file(c, engine, 'reward.py')).not.toContain('response.count("good")');
    expect(file(c, engine, 'README.md')).toContain(`- The reward: ${UNTRANSLATED_WHY}.`);
    const script = buildJob(c, { engine, gpus: 1, trainRows: 16 }).files.find((f) => f.path.endsWith('.sh'))!;
    expect(text(script)).toContain(`# reward: ${UNTRANSLATED_WHY}`);
    // The shipped function says it is the twin instead.
    expect(file(FN, engine, 'README.md')).toContain('is in reward.py as its hand-written Python twin');
  });

  it.each(['verl', 'openrlhf'] as const)('%s: the script and README give the size of the model that trained, and name knobs that did not apply', (engine) => {
    const job = (c: PpoConfig, dims?: { nLayer: number; nHead: number; dModel: number }) =>
      buildJob(c, { engine, gpus: 1, trainRows: 16, ...(dims ? { actor: { origin: 'tab' as const, dims } } : {}) }).files;
    const script = (files: { path: string; data: Uint8Array }[]) => text(files.find((f) => f.path.endsWith('.sh'))!);
    const shipped = script(job(DEFAULT_CONFIG));
    expect(shipped).toContain('trained a 2-layer, 2-head, d_model 64 character transformer (the shipped SFT checkpoint, made by npm run pretrain)');
    expect(shipped).not.toContain('from scratch');
    expect(shipped).not.toContain('did not apply');
    const knobs = script(job({ ...DEFAULT_CONFIG, nLayer: 4, nHead: 4, dModel: 128 }));
    expect(knobs).toContain('its settings asked for 4 layers, 4 heads, d_model 128, which did not apply to that model');
    const reported = job({ ...DEFAULT_CONFIG, nLayer: 4, nHead: 4, dModel: 128 }, { nLayer: 4, nHead: 4, dModel: 128 });
    expect(script(reported)).toContain('trained a 4-layer, 4-head, d_model 128 character transformer (SFT in the tab)');
    expect(script(reported)).not.toContain('did not apply');
    expect(text(reported.find((f) => f.path === 'README.md')!)).toContain('trained a 4-layer, 4-head, d_model 128 character transformer (SFT in the tab)');
  });
});
