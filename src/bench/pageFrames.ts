// Page smoothness while training: how regularly the main thread paints (requestAnimationFrame
// intervals) with the trainer busy in its worker and metrics streaming into the charts. The page
// must stay responsive because it only draws; a long frame here means the page does too much
// per message. `measureFrames` drives an already running server; `printPageBench` (the `page`
// section of `npm run bench`) builds if needed, serves dist/ with `vite preview`, measures, stops.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Page } from '@playwright/test';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../node/chromium.ts';
import { servePreview } from './preview.ts';
import { fmt, table } from './timing.ts';

export interface MeasureFramesOptions {
  /** Base URL of a running preview/dev server, e.g. http://localhost:4173/. */
  url: string;
  /** How long to record frames once training runs (default 10 s). */
  durationMs?: number;
  /** Query string of the config to train with (default: a small model). */
  query?: string;
  /** Chromium binary (default PPO_CHROMIUM or /usr/bin/chromium). */
  executablePath?: string;
  /** Seconds to wait for the real trainer's first metrics before feeding synthetic ones (default 20). */
  trainerWaitS?: number;
  /** Ms between the page being ready and the Start click, as a reader would take (default 0). */
  startDelayMs?: number;
}

export interface FrameReport {
  /** 'trainer': the real worker trained; 'synthetic': metrics were fed at 10 Hz through the test hook. */
  source: 'trainer' | 'synthetic';
  /** Why the synthetic feed was used, when it was. */
  why?: string;
  frames: number;
  p50Ms: number;
  p95Ms: number;
  maxMs: number;
  /** Frames longer than 50 ms (visible stutter). */
  longFrames: number;
  /** Metric points that reached the page's store during the recording. */
  metricsReceived: number;
  /** With the real trainer: ms from navigation start to the first metrics point on the page, Start clicked as soon as the GPU is ready. */
  firstPointMs?: number;
  /** With the real trainer: ms from the Start click to the first metrics point (pipelines, checkpoint, first iteration). */
  startToFirstPointMs?: number;
  /** With the real trainer: iterations per second during the recording. */
  itersPerSecond?: number;
}

/** A small model on the smallest batch the validator accepts, so the software GPU keeps up. */
export const SMALL_CONFIG_QUERY = 'nLayer=1&nHead=2&dModel=32&promptsPerBatch=4&samplesPerPrompt=2&maxResponseLength=6&ppoEpochs=1&miniBatches=1';

export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

/** Iterations shown in the run list (sum over runs), read from the page's text. */
async function iterationsOnPage(page: Page): Promise<number> {
  const texts = await page.locator('[data-testid="run-list"] li .muted').allTextContents();
  return texts.reduce((n, t) => n + (Number.parseInt(t, 10) || 0), 0);
}

/**
 * Records in the page (window.__firstPointMs, ms after navigation start) the moment the run list
 * first counts an iteration: a MutationObserver fires in the same task as the DOM change, where a
 * poll from here would add up to its interval and a round trip.
 */
const WATCH_FIRST_POINT = `(() => {
  const count = () => [...document.querySelectorAll('[data-testid="run-list"] li .muted')].reduce((n, el) => n + (Number.parseInt(el.textContent || '', 10) || 0), 0);
  window.__firstPointMs = count() > 0 ? performance.now() : null;
  if (window.__firstPointMs !== null) return;
  const obs = new MutationObserver(() => {
    if (count() > 0) {
      window.__firstPointMs = performance.now();
      obs.disconnect();
    }
  });
  obs.observe(document.body, { childList: true, subtree: true, characterData: true });
})()`;

async function waitForTrainer(page: Page, waitS: number): Promise<string | null> {
  const deadline = Date.now() + waitS * 1000;
  while (Date.now() < deadline) {
    if ((await iterationsOnPage(page)) > 0) return null;
    const notice = page.getByTestId('notice');
    if ((await notice.count()) > 0 && (await notice.getAttribute('class'))?.includes('error')) {
      return `the trainer reported: ${(await notice.locator('span').first().textContent())?.trim() ?? 'an error'}`;
    }
    if ((await notice.count()) > 0 && /not part of this build/.test((await notice.textContent()) ?? '')) return 'the trainer worker is not part of this build';
    await page.waitForTimeout(250);
  }
  return `no metrics from the trainer within ${waitS} s`;
}

// In-page scripts are plain strings: tsx/esbuild would wrap named functions in a `__name`
// helper that does not exist in the page.

/** A 10 Hz in-page feed of synthetic metrics, samples and ratios (the trainer's message mix). */
const SYNTHETIC_FEED = `(() => {
  let iter = 0;
  let s = 7;
  const rnd = () => (s = (s * 16807) % 2147483647) / 2147483647;
  const hook = window.ppoPlayground;
  window.__feed = setInterval(() => {
    const i = iter++;
    hook.receive({ type: 'stage', stage: ['rollout', 'experience', 'update'][i % 3] });
    hook.receive({ type: 'metrics', iter: i, values: {
      reward_mean: Math.tanh(i / 50) + 0.1 * rnd(), policy_loss: -0.05 + 0.02 * rnd(), value_loss: Math.exp(-i / 40),
      clipfrac: 0.1 * rnd(), kl: i / 200, beta: 0.05, approx_kl: 0.01 * rnd(), entropy: 2 - i / 500,
      explained_variance: 1 - Math.exp(-i / 30), response_length_mean: 6 } });
    const tokens = Array.from({ length: 6 }, (_, k) => ({ text: String(k), advantage: rnd() - 0.5, kl: 0.1 * rnd(), ratio: 0.8 + 0.4 * rnd(), value: rnd() }));
    hook.receive({ type: 'samples', iter: i, rows: Array.from({ length: 8 }, (_, r) => ({ prompt: r + '+' + r + '=', response: String(2 * r), reward: rnd(), endedWithEos: r % 2 === 0, tokens })) });
    hook.receive({ type: 'ratios', iter: i, ratios: Array.from({ length: 48 }, () => 0.7 + 0.6 * rnd()), advantages: Array.from({ length: 48 }, () => rnd() - 0.5) });
  }, 100);
})()`;

/** Resolves with the requestAnimationFrame timestamps of the next DURATION ms. */
const RECORD_FRAMES = (durationMs: number) => `new Promise((resolve) => {
  const t = [];
  const end = performance.now() + ${durationMs};
  const tick = (now) => {
    t.push(now);
    if (now < end) requestAnimationFrame(tick);
    else resolve(t);
  };
  requestAnimationFrame(tick);
})`;

export interface LoadReport {
  /** performance 'paint' entries, ms after navigation start. */
  firstPaintMs: number;
  firstContentfulPaintMs: number;
  domContentLoadedMs: number;
  /** The load event (every script of the first chunk group fetched and run). */
  loadMs: number;
  /** Until the lazily loaded charts panel is in the DOM (its chunk and recharts fetched and run). */
  chartsReadyMs: number;
  /** JavaScript bytes fetched before the first contentful paint (encoded as served: vite preview compresses). */
  jsBytesBeforeFcp: number;
  /** All JavaScript fetched until the charts were ready. */
  jsBytesTotal: number;
}

/** Reads the navigation, paint and script-resource timings the browser recorded for this load. */
const READ_LOAD = `new Promise((resolve) => {
  // Paint entries are delivered after the frame is presented: wait for them (buffered observer).
  const paint = {};
  const done = () => {
    const nav = performance.getEntriesByType('navigation')[0];
    const fcp = paint['first-contentful-paint'] ?? NaN;
    const js = performance.getEntriesByType('resource').filter((e) => /\\.js(\\?|$)/.test(e.name));
    const bytes = (list) => list.reduce((n, e) => n + (e.encodedBodySize || e.transferSize || 0), 0);
    resolve({
      firstPaintMs: paint['first-paint'] ?? NaN,
      firstContentfulPaintMs: fcp,
      domContentLoadedMs: nav ? nav.domContentLoadedEventEnd : NaN,
      loadMs: nav ? nav.loadEventEnd : NaN,
      jsBytesBeforeFcp: bytes(js.filter((e) => e.responseEnd <= fcp)),
      jsBytesTotal: bytes(js),
    });
  };
  const timer = setTimeout(done, 10000);
  new PerformanceObserver((list, obs) => {
    for (const e of list.getEntries()) paint[e.name] = e.startTime;
    if ('first-contentful-paint' in paint) {
      obs.disconnect();
      clearTimeout(timer);
      done();
    }
  }).observe({ type: 'paint', buffered: true });
})`;

export async function measureLoad(url: string, runs = 5, executablePath?: string): Promise<LoadReport> {
  const browser = await chromium.launch({ executablePath: executablePath ?? CHROMIUM_PATH, args: CHROMIUM_ARGS, headless: true });
  try {
    const reports: LoadReport[] = [];
    for (let i = 0; i < runs; i++) {
      // A fresh context each time: nothing cached, like a first visit.
      const context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
      const page = await context.newPage();
      await page.goto(url, { waitUntil: 'load' });
      // The charts panel is a lazy chunk: its heading appears once recharts has loaded and rendered.
      const chartsReadyMs = (await page.evaluate(`new Promise((resolve) => {
        const seen = () => document.getElementById('charts-title') !== null;
        if (seen()) return resolve(performance.now());
        new MutationObserver((_, obs) => { if (seen()) { obs.disconnect(); resolve(performance.now()); } }).observe(document.body, { childList: true, subtree: true });
      })`)) as number;
      const r = (await page.evaluate(READ_LOAD)) as Omit<LoadReport, 'chartsReadyMs'>;
      reports.push({ ...r, chartsReadyMs });
      await context.close();
    }
    const med = (k: keyof LoadReport) =>
      quantile(
        reports
          .map((r) => r[k])
          .filter(Number.isFinite)
          .sort((a, b) => a - b),
        0.5,
      );
    return {
      firstPaintMs: med('firstPaintMs'),
      firstContentfulPaintMs: med('firstContentfulPaintMs'),
      domContentLoadedMs: med('domContentLoadedMs'),
      loadMs: med('loadMs'),
      chartsReadyMs: med('chartsReadyMs'),
      jsBytesBeforeFcp: med('jsBytesBeforeFcp'),
      jsBytesTotal: med('jsBytesTotal'),
    };
  } finally {
    await browser.close();
  }
}

export async function measureFrames(opts: MeasureFramesOptions): Promise<FrameReport> {
  const durationMs = opts.durationMs ?? 10_000;
  const browser = await chromium.launch({
    executablePath: opts.executablePath ?? process.env.PPO_CHROMIUM ?? '/usr/bin/chromium',
    args: CHROMIUM_ARGS,
    headless: true,
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
    const base = opts.url.endsWith('/') ? opts.url : `${opts.url}/`;
    await page.goto(`${base}?${opts.query ?? SMALL_CONFIG_QUERY}`);
    await page
      .getByTestId('gpu-status')
      .filter({ hasText: /WebGPU ready|unavailable|error|CPU/ })
      .waitFor({ timeout: 60_000 });
    if (opts.startDelayMs) await page.waitForTimeout(opts.startDelayMs);
    await page.evaluate(WATCH_FIRST_POINT);
    await page.getByRole('button', { name: 'Start', exact: true }).click();
    const startMs = (await page.evaluate('performance.now()')) as number;
    const why = await waitForTrainer(page, opts.trainerWaitS ?? 20);
    // performance.now() counts from navigation start: the first point's time as the user sees it
    // (the DOM change itself, see WATCH_FIRST_POINT).
    const firstPointMs = why ? undefined : ((await page.evaluate('window.__firstPointMs')) as number);
    if (why) {
      await page.getByRole('button', { name: 'Reset', exact: true }).click();
      await page.evaluate(SYNTHETIC_FEED);
    }
    const before = await iterationsOnPage(page);
    const frames = (await page.evaluate(RECORD_FRAMES(durationMs))) as number[];
    const metricsReceived = (await iterationsOnPage(page)) - before;
    const intervals = frames
      .slice(1)
      .map((t, i) => t - frames[i])
      .sort((a, b) => a - b);
    return {
      source: why ? 'synthetic' : 'trainer',
      why: why ?? undefined,
      frames: frames.length,
      p50Ms: quantile(intervals, 0.5),
      p95Ms: quantile(intervals, 0.95),
      maxMs: intervals[intervals.length - 1] ?? NaN,
      longFrames: intervals.filter((x) => x > 50).length,
      metricsReceived,
      firstPointMs,
      startToFirstPointMs: firstPointMs === undefined ? undefined : firstPointMs - startMs,
      itersPerSecond: why ? undefined : metricsReceived / (durationMs / 1000),
    };
  } finally {
    await browser.close();
  }
}

/**
 * The `page` section of `npm run bench`: first-load timings, then smoothness while training, and
 * page open → first metrics point over `repeats` fresh browsers (--repeats, default 3). With
 * `--against <dist>` the section is firstPointSideBySide.ts instead (bench.ts).
 */
export async function printPageBench(_gpu?: unknown, _cpu?: unknown, ctx?: { repeats?: number }): Promise<FrameReport & { load: LoadReport; firstPoints: number[] }> {
  const root = process.cwd();
  const vite = join(root, 'node_modules', 'vite', 'bin', 'vite.js');
  if (!existsSync(join(root, 'dist', 'index.html'))) {
    console.log('(dist/ missing: running vite build)');
    const built = spawnSync(process.execPath, [vite, 'build'], { stdio: 'inherit' });
    if (built.status !== 0) throw new Error('vite build failed');
  }
  const server = await servePreview();
  const url = server.url;
  try {
    const load = await measureLoad(url);
    console.log('## First load (headless Chromium, fresh browser context each time, median of 5; ms after navigation start)\n');
    console.log(
      table(
        ['first paint', 'first contentful paint', 'DOMContentLoaded', 'load', 'charts in DOM', 'JS before FCP (as served)', 'JS until charts (as served)'],
        [
          [
            fmt(load.firstPaintMs),
            fmt(load.firstContentfulPaintMs),
            fmt(load.domContentLoadedMs),
            fmt(load.loadMs),
            fmt(load.chartsReadyMs),
            `${(load.jsBytesBeforeFcp / 1000).toFixed(1)} kB`,
            `${(load.jsBytesTotal / 1000).toFixed(1)} kB`,
          ],
        ],
      ),
    );
    console.log('');
    // PPO_BENCH_START_DELAY_MS: click Start that long after the page is ready, as a reader would.
    const startDelayMs = Number(process.env.PPO_BENCH_START_DELAY_MS ?? 0) || 0;
    const r = await measureFrames({ url, startDelayMs });
    // More first points, each from a fresh browser (a first visit: no pipeline cache), shorter runs.
    const firstPoints = r.firstPointMs === undefined ? [] : [r.firstPointMs];
    for (let i = 1; i < (ctx?.repeats ?? 3) && firstPoints.length > 0; i++) {
      const more = await measureFrames({ url, startDelayMs, durationMs: 1000 });
      if (more.firstPointMs !== undefined) firstPoints.push(more.firstPointMs);
    }
    firstPoints.sort((a, b) => a - b);
    console.log('## Page smoothness while training (requestAnimationFrame intervals, headless Chromium, 10 s)\n');
    if (r.source === 'synthetic') {
      console.log(`Metrics were SYNTHETIC (fed at 10 Hz through the test hook, no GPU work) because ${r.why}.\n`);
    } else {
      console.log('Metrics came from the real trainer worker (small config).\n');
    }
    console.log(
      table(
        ['source', 'frames', 'p50 ms', 'p95 ms', 'max ms', 'frames > 50 ms', 'metric points drawn'],
        [[r.source, String(r.frames), fmt(r.p50Ms), fmt(r.p95Ms), fmt(r.maxMs), String(r.longFrames), String(r.metricsReceived)]],
      ),
    );
    console.log('');
    if (r.firstPointMs !== undefined) {
      console.log(`## First chart point and training speed in the page (${SMALL_CONFIG_QUERY}; Start clicked ${startDelayMs} ms after ready)\n`);
      console.log(
        table(
          ['page open → first metrics point (median, range, loads)', 'Start → first metrics point (first load)', 'iterations per second'],
          [
            [
              `${fmt(quantile(firstPoints, 0.5))} ms (${fmt(firstPoints[0])}–${fmt(firstPoints[firstPoints.length - 1])}, ${firstPoints.length})`,
              `${fmt(r.startToFirstPointMs!)} ms`,
              r.itersPerSecond!.toFixed(2),
            ],
          ],
        ),
      );
      console.log('');
    }
    return { ...r, load, firstPoints };
  } finally {
    server.stop();
  }
}
