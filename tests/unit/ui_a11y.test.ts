import { beforeAll, describe, expect, it } from 'vitest';
import { loadNamespaces } from '../../src/i18n/index.ts';
import { announcement } from '../../src/ui/a11y/announce.ts';
import { tabForKey } from '../../src/ui/a11y/tabs.ts';
import { chartSummary, runSummary, trend } from '../../src/ui/charts/chartSummary.ts';

// The chart texts are in the lazily loaded `charts` namespace.
beforeAll(() => loadNamespaces(['charts']));

const line = (ys: number[], x0 = 1) => ys.map((y, i) => ({ x: x0 + i, y }));

describe('trend', () => {
  it('reads the direction of the last ten points', () => {
    expect(trend(line([0, 0.1, 0.2, 0.3, 0.4]))).toBe('rising');
    expect(trend(line([1, 0.8, 0.6, 0.4]))).toBe('falling');
    expect(trend(line([0.5, 0.5, 0.5]))).toBe('flat');
  });
  it('judges only the window: a long rise that levelled off is flat', () => {
    const ys = [...Array.from({ length: 20 }, (_, i) => i / 20), ...Array(10).fill(1)];
    expect(trend(line(ys))).toBe('flat');
    expect(trend(line(ys), 30)).toBe('rising');
  });
  it('calls noise well inside the series spread flat', () => {
    const ys = [0, 1, ...Array.from({ length: 10 }, (_, i) => 0.5 + (i % 2 ? 0.01 : -0.01))];
    expect(trend(line(ys))).toBe('flat');
  });
  it('needs two points', () => {
    expect(trend([])).toBe('flat');
    expect(trend(line([3]))).toBe('flat');
  });
});

describe('chart summaries', () => {
  it('say the last value, its iteration and the trend per run', () => {
    expect(runSummary('run 1', line([0.1, 0.2, 0.3, 0.43], 12))).toBe('run 1 last 0.43 at iteration 15, rising over the last 4 iterations');
    expect(
      runSummary(
        'run 1',
        line(
          Array.from({ length: 15 }, (_, i) => 1 - i / 10),
          1,
        ),
      ),
    ).toBe('run 1 last -0.4 at iteration 15, falling over the last 10 iterations');
    expect(runSummary('a', line([2], 0))).toBe('a last 2 at iteration 0');
    expect(runSummary('a', [])).toBeNull();
  });
  it('join the runs with data and name the chart', () => {
    expect(
      chartSummary('Reward', [
        { name: 'run 1', points: line([0, 1], 1) },
        { name: 'run 2', points: [] },
      ]),
    ).toBe('Reward: run 1 last 1 at iteration 2, rising over the last 2 iterations.');
    expect(chartSummary('Reward', [{ name: 'run 1', points: [] }])).toBe('Reward: no data yet.');
    expect(chartSummary('Held-out accuracy', [{ name: 'r', points: line([0.1, 0.1], 0) }], 'evaluations')).toBe(
      'Held-out accuracy: r last 0.1 at iteration 1, flat over the last 2 evaluations.',
    );
  });
});

describe('announcement', () => {
  const idle = { runState: 'idle' as const, notice: null };
  it('says when training starts, pauses, resumes and stops', () => {
    expect(announcement(idle, { runState: 'running', notice: null })).toBe('Training started.');
    expect(announcement({ runState: 'running', notice: null }, { runState: 'paused', notice: null })).toBe('Training paused.');
    expect(announcement({ runState: 'paused', notice: null }, { runState: 'running', notice: null })).toBe('Training resumed.');
    expect(announcement({ runState: 'paused', notice: null }, idle)).toBe('Training stopped.');
    expect(announcement(idle, idle)).toBeNull();
  });
  it('adds the message that came with the change, but leaves errors to their alert', () => {
    const nan = { tone: 'warn' as const, text: 'Paused: NaN in the policy loss.' };
    expect(announcement({ runState: 'running', notice: null }, { runState: 'paused', notice: nan })).toBe('Training paused. Paused: NaN in the policy loss.');
    expect(announcement({ runState: 'running', notice: null }, { runState: 'running', notice: { tone: 'warn', text: 'GPU device lost.' } })).toBe('GPU device lost.');
    expect(announcement({ runState: 'running', notice: null }, { runState: 'paused', notice: { tone: 'error', text: 'boom' } })).toBe('Training paused.');
    expect(announcement({ runState: 'paused', notice: nan }, { runState: 'paused', notice: null })).toBeNull();
  });
  it("does not repeat the user's own Pause when the worker confirms it, but says a later reason", () => {
    const pausedByUser = { runState: 'paused' as const, notice: null };
    const confirmation = { tone: 'info' as const, text: 'Paused: paused by the user', echo: true as const };
    expect(announcement(pausedByUser, { runState: 'paused', notice: confirmation })).toBeNull();
    expect(announcement({ runState: 'paused', notice: confirmation }, { runState: 'paused', notice: { tone: 'info', text: 'Paused: a non-finite loss' } })).toBe(
      'Paused: a non-finite loss',
    );
  });
});

describe('tabForKey', () => {
  it('moves with the arrows, wrapping, and jumps with Home and End', () => {
    expect(tabForKey('ArrowRight', 0, 6)).toBe(1);
    expect(tabForKey('ArrowRight', 5, 6)).toBe(0);
    expect(tabForKey('ArrowLeft', 0, 6)).toBe(5);
    expect(tabForKey('Home', 3, 6)).toBe(0);
    expect(tabForKey('End', 3, 6)).toBe(5);
    expect(tabForKey('Enter', 3, 6)).toBeNull();
    expect(tabForKey('ArrowRight', 0, 0)).toBeNull();
  });
});
