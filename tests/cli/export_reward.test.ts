// reward.py gives the playground's score (rule, clip, no-EOS penalty) on the same responses: a few
// hundred per task — right, wrong, empty, EOS-less, clipped — scored by python3 through both entry
// points (verl's compute_score, OpenRLHF's reward_func) and compared exactly with the TypeScript rule.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dataSource, groundTruth, heldOutPrompts } from '../../src/export/dataset.ts';
import type { Engine } from '../../src/export/engines.ts';
import { rewardPy } from '../../src/export/rewardPy.ts';
import { DEFAULT_CONFIG, type PpoConfig } from '../../src/rl/config.ts';
import { finalScores, ruleScores } from '../../src/rl/score.ts';
import { arithmeticAnswer } from '../../src/tasks/arithmetic.ts';
import { getTask, type TaskName, type TaskSample } from '../../src/tasks/index.ts';
import { sentenceEnding } from '../../src/tasks/sentiment.ts';
import { Rng } from '../../src/util/rng.ts';

const dir = mkdtempSync(join(tmpdir(), 'export-reward-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Right, near-miss, random, empty and over-long responses, each with and without EOS. */
function samples(task: TaskName, rng: Rng, count: number): TaskSample[] {
  const t = getTask(task);
  const prompts = [...heldOutPrompts(task), ...Array.from({ length: 40 }, () => t.trainPrompt(rng))];
  const alphabet = t.alphabet;
  const randomText = (maxLen: number) => Array.from({ length: rng.int(0, maxLen + 1) }, () => alphabet[rng.int(0, alphabet.length)]).join('');
  const out: TaskSample[] = [];
  for (let i = 0; i < count; i++) {
    const prompt = prompts[rng.int(0, prompts.length)];
    const kind = i % 5;
    let response: string;
    if (kind === 0) {
      // the right answer
      if (task === 'arithmetic') response = String(arithmeticAnswer(prompt));
      else if (task === 'stop') response = 'ab'.repeat(20).slice(0, Number(groundTruth(task, prompt)));
      else response = sentenceEnding(rng, 'positive');
    } else if (kind === 1) {
      // near miss: off by one / one character too many / a negative or neutral ending
      if (task === 'arithmetic') response = String(arithmeticAnswer(prompt) + (rng.next() < 0.5 ? 1 : -1));
      else if (task === 'stop') response = 'a'.repeat(Number(groundTruth(task, prompt)) + 1);
      else response = sentenceEnding(rng, rng.next() < 0.5 ? 'negative' : 'neutral');
    } else if (kind === 2) response = '';
    else if (kind === 3) response = randomText(t.maxResponseChars);
    // over-long: repeated lexicon words push the sentiment score past the clip
    else response = task === 'sentiment' ? ' great good nice fun superb.' : randomText(3 * t.maxResponseChars);
    out.push({ prompt, response, endedWithEos: rng.next() < 0.7 });
  }
  return out;
}

const PY_DRIVER = `
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("reward", sys.argv[1])
reward = importlib.util.module_from_spec(spec)
spec.loader.exec_module(reward)
cases = json.load(open(sys.argv[2]))
unmarked = reward.UNMARKED_ENDS_WITH_EOS
out = {"hinted": [], "marked": [], "unmarked": [], "reward_func": None}
for c in cases:
    out["hinted"].append(reward.compute_score(c["source"], c["response"], c["truth"], {"ended_with_eos": c["eos"], "index": 0}))
    marked = c["response"] + ("<|im_end|>" if c["eos"] else "")
    out["marked"].append(reward.compute_score(c["source"], marked, c["truth"], None if c["eos"] else {"ended_with_eos": False}))
    # No marker and no hint: the engine's reading of unmarked text decides (None: not that case).
    out["unmarked"].append(reward.compute_score(c["source"], c["response"], c["truth"]) if c["eos"] == unmarked else None)
# OpenRLHF: query = templated prompt + response (+ end token and padding when it stopped)
queries = [c["chat"] + c["response"] + ("<|im_end|><|endoftext|><|endoftext|>" if c["eos"] else "") for c in cases]
prompts = [c["chat"] for c in cases]
res = reward.reward_func(queries, prompts, [c["truth"] for c in cases])
out["reward_func"] = res["rewards"].tolist() if hasattr(res["rewards"], "tolist") else list(res["rewards"])
print(json.dumps(out))
`;

interface PyScores {
  hinted: number[];
  marked: number[];
  unmarked: (number | null)[];
  reward_func: number[];
}

function runPython(py: string, cases: unknown[]): PyScores {
  const rewardFile = join(dir, `reward_${Math.random().toString(36).slice(2)}.py`);
  const casesFile = `${rewardFile}.json`;
  const driver = join(dir, 'driver.py');
  writeFileSync(rewardFile, py);
  writeFileSync(casesFile, JSON.stringify(cases));
  writeFileSync(driver, PY_DRIVER);
  const r = spawnSync('python3', ['-I', driver, rewardFile, casesFile], { encoding: 'utf8', timeout: 60_000 });
  expect(r.error, 'python3 must be installed (npm test installs it)').toBeUndefined();
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  return JSON.parse(r.stdout);
}

const CONFIGS: { name: string; over: Partial<PpoConfig> }[] = [
  { name: 'default clip and penalty', over: {} },
  { name: 'tight clip, no-EOS penalty', over: { scoreClip: 0.5, noEosPenalty: -2 } },
];

describe('reward.py matches the playground score', () => {
  for (const task of ['arithmetic', 'stop', 'sentiment'] as TaskName[]) {
    for (const engine of ['verl', 'openrlhf'] as Engine[]) {
      for (const { name, over } of CONFIGS) {
        it(`${task} / ${engine} / ${name}`, () => {
          const config: PpoConfig = { ...DEFAULT_CONFIG, ...over, task };
          const batch = samples(task, new Rng(0x7e57 + task.length), 300);
          const expected = Array.from(finalScores(ruleScores(getTask(task), batch), batch, config.scoreClip, config.noEosPenalty));
          // Every kind of case is present, and the scores are not all alike.
          expect(batch.some((s) => s.response === '')).toBe(true);
          expect(batch.some((s) => !s.endedWithEos)).toBe(true);
          expect(new Set(expected).size).toBeGreaterThanOrEqual(2);
          const cases = batch.map((s) => ({
            source: dataSource(task),
            response: s.response,
            eos: s.endedWithEos,
            truth: groundTruth(task, s.prompt),
            chat: `<|im_start|>system\nInstruction.<|im_end|>\n<|im_start|>user\n${s.prompt}<|im_end|>\n<|im_start|>assistant\n`,
          }));
          const py = runPython(rewardPy(config, engine), cases);
          expect(py.hinted).toEqual(expected);
          expect(py.marked).toEqual(expected);
          // Unmarked text: verl's file reads it as finished, OpenRLHF's as cut off.
          const unmarkedEos = engine === 'verl';
          const covered = py.unmarked.filter((v, i) => v !== null && batch[i].endedWithEos === unmarkedEos);
          expect(covered.length).toBeGreaterThan(50);
          for (const [i, v] of py.unmarked.entries()) expect(v).toBe(batch[i].endedWithEos === unmarkedEos ? expected[i] : null);
          // OpenRLHF's entry point sees the end token in the query; torch (if installed) returns float32.
          if (engine === 'openrlhf') for (const [i, v] of py.reward_func.entries()) expect(v).toBeCloseTo(expected[i], 6);
        });
      }
    }
  }

  it('reads an unmarked response as finished for verl and as cut off for OpenRLHF', () => {
    const config: PpoConfig = { ...DEFAULT_CONFIG, task: 'stop', noEosPenalty: -0.5 };
    const cases = [{ source: dataSource('stop'), response: 'abab', eos: true, truth: '4', chat: 'n=4:' }];
    const script = (engine: Engine) => {
      const f = join(dir, `unmarked_${engine}.py`);
      writeFileSync(f, rewardPy(config, engine));
      const r = spawnSync(
        'python3',
        [
          '-I',
          '-c',
          `import importlib.util as u,sys;s=u.spec_from_file_location("r",sys.argv[1]);m=u.module_from_spec(s);s.loader.exec_module(m);print(m.compute_score(m.DATA_SOURCE,"abab","4"), m.reward_func(["n=4:abab"],["n=4:"],["4"])["rewards"][0])`,
          f,
        ],
        { encoding: 'utf8' },
      );
      expect(r.stderr).toBe('');
      return r.stdout.trim().split(' ').map(Number);
    };
    expect(cases.length).toBe(1);
    // The verl file reads unmarked text as finished (exact length → 1), the OpenRLHF file as cut off (−1 − 0.5).
    expect(script('verl')).toEqual([1, 1]);
    expect(script('openrlhf')).toEqual([-1.5, -1.5]);
  });

  it('rejects rows of another data source', () => {
    const f = join(dir, 'wrong_source.py');
    writeFileSync(f, rewardPy({ ...DEFAULT_CONFIG }, 'verl'));
    const r = spawnSync(
      'python3',
      [
        '-I',
        '-c',
        `import importlib.util as u,sys;s=u.spec_from_file_location("r",sys.argv[1]);m=u.module_from_spec(s);s.loader.exec_module(m);m.compute_score("gsm8k","1","1")`,
        f,
      ],
      { encoding: 'utf8' },
    );
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/reward\.py scores ppo_playground\/arithmetic, got data_source 'gsm8k'/);
  });
});
