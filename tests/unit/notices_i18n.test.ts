// The notices in both languages: the English the page words itself is the worker's English word
// for word, and in Chinese the same notices come out with the glossary's terms and the metric ids.
import { afterAll, describe, expect, it } from 'vitest';
import { switchLocale } from '../../src/i18n/index.ts';
import { DEFAULT_CHECKED, DEFAULT_CONFIG } from '../../src/rl/config.ts';
import { announcement } from '../../src/ui/a11y/announce.ts';
import * as notices from '../../src/store/notices.ts';
import { classifyStateProblem } from '../../src/store/resume.ts';
import type { RunSequence } from '../../src/store/appStore.ts';
import { adviceText, nanAdvice } from '../../src/worker/nanAdvice.ts';

const cfg = (over: Partial<typeof DEFAULT_CONFIG>) => ({ ...DEFAULT_CONFIG, ...over });

describe('notices in English', () => {
  it('the page words the knob advice as the worker does', () => {
    const cases = [
      nanAdvice('policy_loss', cfg({ actorLr: 1 })),
      nanAdvice('values', cfg({ criticLr: DEFAULT_CONFIG.criticLr })),
      nanAdvice('kl', cfg({ klInReward: true, klCoef: 7.25 })),
      nanAdvice('kl_loss', cfg({ useKlLoss: true, klLossCoef: 0.5, klInReward: false })),
      nanAdvice('policy_loss', cfg({ clipHigh: 0.9 })),
    ];
    for (const a of cases) expect(notices.knobAdviceText(a)).toBe(adviceText(a));
  });
});

describe('notices in Chinese', () => {
  afterAll(() => switchLocale('en'));

  it('a NaN pause names the stage, the metric id and the knob in Chinese', async () => {
    await switchLocale('zh-CN');
    const advice = nanAdvice('policy_loss', cfg({ actorLr: DEFAULT_CONFIG.actorLr * 100 }));
    const text = notices.nonFinitePaused({ iter: 3, stage: 'update', quantity: 'policy_loss', value: Number.NaN, advice });
    expect(text).toBe(
      `已暂停：第 3 次迭代在更新阶段出现非有限值 policy_loss（NaN）。已恢复到这次迭代之前的状态，图表没有任何丢失。建议：最可能是策略模型（actor）学习率：actorLr = ${advice.value}（默认值 ${advice.defaultValue} 的 100×）；可试 actorLr = ${advice.defaultValue}。`,
    );
  });

  it('device loss, the budget, storage and the tab lock speak Chinese; the constants follow the switch', async () => {
    await switchLocale('zh-CN');
    expect(notices.deviceLost({ type: 'deviceLost', reason: 'destroyed', stage: 'rollout', iter: 4 })).toBe(
      'GPU 设备在第 4 次迭代后、采样阶段丢失（destroyed）。正在获取新设备，并从最后保存的状态重建训练器…',
    );
    expect(notices.deviceRecovered({ type: 'deviceRecovered', adapter: 'SwiftShader', fromIter: 2, lostAt: 4, replayed: 2, resumed: false })).toBe(
      'GPU 设备丢失后已更换（SwiftShader）；训练器已从最后保存的状态重建。将重放 2 次迭代（在第 4 次丢失，从第 2 次保存的状态重新开始）。按“开始”继续。',
    );
    expect(notices.budgetReached(50)).toBe('已达到 50 次迭代的预算。按“开始”继续训练；按“重置”开始新的运行。');
    expect(notices.storageFull({ metricsThrough: 12, stateAt: 10, unsavedState: true })).toBe(
      '存储空间已满：这次运行截至第 12 次迭代的指标已保存；最新的训练器状态没有保存（刷新后从第 10 次迭代恢复）。请释放空间或删除旧的运行；此标签页中的图表会保留。',
    );
    expect(notices.commandLabel('trainRewardModel')).toBe('训练奖励模型');
    expect(notices.TAB_READ_ONLY).toBe('本页面已在另一个标签页中训练；在你关闭那个标签页或接管之前，这里的运行是只读的。');
    expect(classifyStateProblem(new Error('trainer state: truncated')).label).toBe('训练器状态已损坏');
    expect(announcement({ runState: 'running', notice: null }, { runState: 'paused', notice: { tone: 'info', text: notices.paused('paused by the user') } })).toBe(
      '训练已暂停。已暂停：由你手动暂停',
    );
    await switchLocale('en');
    expect(notices.TAB_READ_ONLY).toBe('Training is open in another tab of this page; this tab is read-only for runs until you close it or take over.');
    expect(notices.budgetReached(50)).toBe('Reached the budget of 50 iterations. Start trains on past it; Reset begins a new run.');
  });
});

describe('the notices of a preset run arm after arm name the button the card shows', () => {
  afterAll(() => switchLocale('en'));
  const arms = (n: number) => Array.from({ length: n }, (_, i) => ({ label: `arm ${i}`, config: DEFAULT_CHECKED }));
  const seqOf = (n: number): RunSequence => ({ preset: 'P', arms: arms(n), budget: 10, index: 1 });

  it('"Run both" for two arms, "Run all N" for more, in both languages', async () => {
    expect(notices.sequenceStopped(seqOf(2), 3, 'boom')).toBe(
      '“P” (Run both) stopped at arm 2 of 2, “arm 1”, after 3 of 10 iterations. boom. Start retries this arm from iteration 3; Reset ends Run both (finished arms are kept).',
    );
    expect(notices.sequenceStopped(seqOf(4), 3, 'boom')).toBe(
      '“P” (Run all 4) stopped at arm 2 of 4, “arm 1”, after 3 of 10 iterations. boom. Start retries this arm from iteration 3; Reset ends Run all 4 (finished arms are kept).',
    );
    expect(notices.sequenceRetrains(seqOf(3), 'No saved state.')).toBe('No saved state. Run all 3 goes on: “arm 1” trains again from iteration 0.');
    await switchLocale('zh-CN');
    expect(notices.sequenceRetrains(seqOf(4), '没有保存的状态。')).toBe('没有保存的状态。依次训练全部 4 组继续：“arm 1”从第 0 次迭代重新训练。');
  });
});
