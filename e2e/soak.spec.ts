// The page soaked: a tiny config trains for PPO_SOAK_MINUTES minutes (excluded from the default
// e2e run; `PPO_SOAK_MINUTES=10 npx playwright test e2e/soak.spec.ts`) while we sample, a few
// dozen times, the DOM node count, the chart points kept (each line is downsampled to at most
// MAX_POINTS), the JS heap after a forced GC and the iterations done. The table is printed and
// written to .reports/page-soak.json. Flat means: DOM nodes within 5% of the first sample taken
// after warm-up (which ends once the chart lines are full), chart points never above the cap, heap
// growth no more than the run's metric history accounts for.
import { mkdirSync, writeFileSync } from 'node:fs';
import { expect, test, type Page } from '@playwright/test';
import { MAX_POINTS } from '../src/ui/charts/series.ts';

const MINUTES = Number(process.env.PPO_SOAK_MINUTES ?? 0);
const SMALL = '?promptsPerBatch=2&samplesPerPrompt=2&maxResponseLength=4&ppoEpochs=1&miniBatches=1&evalEvery=10';
const CHARTS = ['policy_loss', 'value_loss', 'reward_mean', 'clipfrac', 'kl'];
/** What one iteration may add to the kept history: a MetricPoint of 35 metrics measures ~0.7 KB in V8; 4 KB leaves room for the run list and persistence. */
const HISTORY_BYTES_PER_ITER = 4096;

interface Sample {
  seconds: number;
  iterations: number;
  domNodes: number;
  chartPoints: number;
  maxLinePoints: number;
  heapMB: number;
}

async function iterations(page: Page): Promise<number> {
  const chip = page.getByTestId('run-list').getByRole('listitem').first();
  if ((await chip.count()) === 0) return 0;
  const m = /(\d+) it/.exec((await chip.textContent()) ?? '');
  return m ? Number(m[1]) : 0;
}

test.skip(!(MINUTES > 0), 'set PPO_SOAK_MINUTES to soak the page');

test(`page soak: ${MINUTES} minutes of training`, async ({ page }) => {
  test.setTimeout((MINUTES * 60 + 120) * 1000);
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Performance.enable');
  const heapMB = async () => {
    await cdp.send('HeapProfiler.collectGarbage');
    const { metrics } = await cdp.send('Performance.getMetrics');
    return (metrics.find((m) => m.name === 'JSHeapUsedSize')?.value ?? NaN) / 1048576;
  };
  await page.goto(`/${SMALL}`);
  await expect(page.getByTestId('gpu-status')).toContainText('WebGPU ready', { timeout: 30_000 });
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  const t0 = Date.now();
  const samples: Sample[] = [];
  const every = Math.max(10_000, (MINUTES * 60_000) / 30);
  while (Date.now() - t0 < MINUTES * 60_000) {
    await page.waitForTimeout(every);
    const lines = await page.evaluate((charts) => {
      const counts: number[] = [];
      for (const c of charts) {
        for (const path of document.querySelectorAll(`[data-testid="chart-${c}"] path.recharts-line-curve`)) {
          counts.push((path.getAttribute('d') ?? '').match(/[LMC]/g)?.length ?? 0);
        }
      }
      return { domNodes: document.getElementsByTagName('*').length, counts };
    }, CHARTS);
    const s: Sample = {
      seconds: Math.round((Date.now() - t0) / 1000),
      iterations: await iterations(page),
      domNodes: lines.domNodes,
      chartPoints: lines.counts.reduce((a, b) => a + b, 0),
      maxLinePoints: Math.max(0, ...lines.counts),
      heapMB: await heapMB(),
    };
    samples.push(s);
    console.log(`[soak] ${JSON.stringify(s)}`);
  }
  await page.getByRole('button', { name: 'Pause', exact: true }).click();
  mkdirSync('.reports', { recursive: true });
  writeFileSync('.reports/page-soak.json', JSON.stringify({ minutes: MINUTES, config: SMALL, samples }, null, 2));
  console.log(
    [
      '  s  iter   DOM  chart pts  max/line  heap MB',
      ...samples.map(
        (s) =>
          `${String(s.seconds).padStart(4)} ${String(s.iterations).padStart(5)} ${String(s.domNodes).padStart(5)} ${String(s.chartPoints).padStart(10)} ${String(s.maxLinePoints).padStart(9)} ${s.heapMB.toFixed(1).padStart(8)}`,
      ),
    ].join('\n'),
  );

  // Warm-up: the first tenth of the run, at least a minute (shaders compile, JIT settles), and the
  // charts full: until every line holds MAX_POINTS points the chart state grows with each
  // iteration by design (a heap-snapshot diff of iterations 17 → 90 put most of the growth in
  // chart point objects and recharts' selector caches), and after that it is bounded by the cap.
  const warmAt = Math.max(60, (MINUTES * 60) / 10);
  const last = samples[samples.length - 1];
  const warm = samples.find((s) => s.seconds >= warmAt && s.maxLinePoints >= MAX_POINTS && s !== last);
  expect(warm, `the charts never reached their ${MAX_POINTS}-point cap before the last sample: soak longer`).toBeDefined();
  if (!warm) return;
  expect(last.iterations).toBeGreaterThan(warm.iterations);
  await expect(page.locator('[data-testid="notice"].error')).toHaveCount(0);
  for (const s of samples.filter((x) => x.seconds >= warm.seconds)) {
    expect(s.domNodes, `DOM nodes at ${s.seconds} s`).toBeLessThanOrEqual(Math.ceil(warm.domNodes * 1.05));
    expect(s.maxLinePoints, `points of one chart line at ${s.seconds} s`).toBeLessThanOrEqual(MAX_POINTS + 1);
  }
  const allowedMB = warm.heapMB * 1.05 + ((last.iterations - warm.iterations) * HISTORY_BYTES_PER_ITER) / 1048576;
  expect(last.heapMB, `heap ${last.heapMB.toFixed(1)} MB after ${last.iterations} iterations (allowed ${allowedMB.toFixed(1)})`).toBeLessThanOrEqual(allowedMB);
});
