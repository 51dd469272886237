// The "Scale it up" panel words a job problem from plan.ts's structure: in English exactly the
// message the CLI prints, in Chinese with the same numbers and the config keys left as they are.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadNamespaces, switchLocale } from '../../src/i18n/index.ts';
import { DEFAULT_CONFIG, validateConfig } from '../../src/rl/config.ts';
import { JobError, type JobProblem, jobProblemMessage, planJob } from '../../src/export/plan.ts';
import { jobErrorText, jobProblemText } from '../../src/ui/scaleUpText.ts';

const PROBLEMS: JobProblem[] = [
  { kind: 'config', problems: validateConfig({ ...DEFAULT_CONFIG, clipLow: 2 }) },
  { kind: 'range', field: 'gpus', value: 0, min: 1, max: 64 },
  { kind: 'trainRowsBelowBatch', trainRows: 4, promptsPerBatch: 8 },
  { kind: 'gpuSplit', gpus: 3, sequences: 16, allowed: [1, 2, 4, 8, 16] },
  { kind: 'verlGpuSplit', gpus: 3, sequences: 16 },
];

function thrown(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  throw new Error('expected a throw');
}

describe('job problems in the page', () => {
  beforeAll(() => loadNamespaces(['exportJob']));
  afterAll(() => switchLocale('en'));

  it('say in English exactly what the CLI prints', () => {
    for (const p of PROBLEMS) expect(jobProblemText(p), p.kind).toBe(jobProblemMessage(p));
    const e = thrown(() => planJob(DEFAULT_CONFIG, { engine: 'verl', gpus: 3, trainRows: 64 }));
    expect(e).toBeInstanceOf(JobError);
    expect(jobErrorText(e)).toBe((e as JobError).message);
    expect(jobErrorText(new Error('zip failed'))).toBe('zip failed');
  });

  it('say it in Chinese with the same numbers and keys', async () => {
    await switchLocale('zh-CN');
    const split = jobProblemText(PROBLEMS[3]);
    expect(split).toBe('gpus = 3：一个小批量有 16 条序列，必须能平均分到各 GPU 上；可选：1、2、4、8、16');
    expect(jobProblemText(PROBLEMS[2])).toContain('promptsPerBatch（8）');
    // A config problem names the setting by its Chinese label and key, with the allowed range.
    expect(jobProblemText(PROBLEMS[0])).toMatch(/^当前设置有误，请先在设置中修正：.*（clipLow） = 2/);
  });
});
