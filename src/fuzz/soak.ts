// The soak: one trainer run for many iterations, sampling what could leak — GPU bytes held by the
// buffer pool, live GPU buffers, pool buffers held by live tensors, JS heap — and the time per
// iteration. Memory is read after every iteration (a leak of one buffer per iteration shows at
// once); heap and time at proportional points (10, 100, 500, 1000 of 1000). Verdict: every figure
// after warm-up stays within 5% of its value at the first point.
import { getHeapSnapshot } from 'node:v8';
import type { GpuMemory } from '../gpu/runtime.ts';
import type { PpoConfig } from '../rl/config.ts';
import type { PpoTrainer } from '../rl/trainer.ts';

export interface SoakPoint {
  iter: number;
  /** Median wall-clock seconds per iteration over the window that ends here. */
  iterS: number;
  /**
   * Median CPU seconds (user + system, every thread of this process: the trainer, and Dawn with
   * SwiftShader when WebGPU is software) per iteration over the same window. This is what the
   * verdict judges: on a machine shared with other work the wall clock measures the neighbours
   * (a 1000-iteration CPU soak on 2 shared cores went 0.34 → 0.78 s per iteration as other jobs
   * started), while CPU time follows the work the iteration itself does.
   */
  cpuS: number;
  heapMB: number;
  /**
   * Live JS data: the heap snapshot's objects other than V8's compiled code and its metadata (deopt
   * data, relocation info, source positions). The JIT keeps optimising functions that are called
   * only a few times per iteration for hundreds of iterations (a heap-snapshot diff of iterations
   * 50 → 350 of the tiny CPU soak: +600 KB, 96% of it code objects, +112 bytes of JS objects), and
   * in Node 20 much of that metadata lives in the old space, not the code space, so only a
   * snapshot can tell it from data a leak would add.
   */
  dataMB: number;
  rssMB: number;
  gpu: GpuMemory | null;
}

export interface SoakCheck {
  what: string;
  atWarmup: number;
  /** The largest value after warm-up (for time: the largest windowed median). */
  worst: number;
  flat: boolean;
}

export interface SoakReport {
  iters: number;
  points: SoakPoint[];
  checks: SoakCheck[];
  flat: boolean;
}

export const FLAT_TOLERANCE = 0.05;

/** Warm-up: pipelines compile and the pool fills its size classes during the first iterations. */
export const WARMUP_ITERS = 10;

/**
 * Sample points: 1%, 10%, 50% and 100% of the run (10, 100, 500, 1000 for 1000 iterations), the
 * first never before WARMUP_ITERS (a 30-iteration run samples 10, 15 and 30).
 */
export function soakPoints(iters: number): number[] {
  const warm = Math.min(iters, Math.max(WARMUP_ITERS, Math.round(iters * 0.01)));
  const rest = [0.1, 0.5, 1].map((f) => Math.round(iters * f)).filter((i) => i > warm);
  return [...new Set([warm, ...rest])];
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? 0 : s[Math.floor(s.length / 2)];
}

const MB = 1024 * 1024;

export interface SoakOptions {
  trainer: PpoTrainer;
  iters: number;
  /** GPU memory of the backend (null on the CPU backend). */
  memory: () => GpuMemory | null;
  /** Evaluation on held-out prompts every this many iterations, as the page does (0 = never). */
  evalEvery?: number;
  onPoint?: (p: SoakPoint) => void;
}

/** Sum of the self sizes of a heap snapshot's nodes whose type is not `code`. */
export function nonCodeBytes(snapshot: HeapSnapshotJson): number {
  const { node_fields: fields, node_types: types } = snapshot.snapshot.meta;
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const sizeAt = fields.indexOf('self_size');
  const code = types[0].indexOf('code');
  if (typeAt < 0 || sizeAt < 0 || code < 0) throw new Error('heap snapshot: unexpected node layout');
  let bytes = 0;
  for (let i = 0; i < snapshot.nodes.length; i += width) if (snapshot.nodes[i + typeAt] !== code) bytes += snapshot.nodes[i + sizeAt];
  return bytes;
}

/** The parts of V8's heap snapshot format that nonCodeBytes reads. */
export interface HeapSnapshotJson {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
}

async function heap(): Promise<{ heapMB: number; dataMB: number; rssMB: number }> {
  // With --expose-gc the heap is measured after a full collection: live data, not garbage.
  (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  let text = '';
  for await (const chunk of getHeapSnapshot()) text += String(chunk);
  const data = nonCodeBytes(JSON.parse(text) as HeapSnapshotJson);
  return { heapMB: m.heapUsed / MB, dataMB: data / MB, rssMB: m.rss / MB };
}

export async function runSoak(o: SoakOptions): Promise<SoakReport> {
  const points = soakPoints(o.iters);
  const warm = points[0];
  const out: SoakPoint[] = [];
  const times: number[] = [];
  const cpuTimes: number[] = [];
  // Memory after every iteration from warm-up on: the worst value, not just four samples.
  const worstGpu = { poolBytes: 0, liveBuffers: 0, tensorBuffers: 0, bindGroups: 0 };
  for (let i = 1; i <= o.iters; i++) {
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    await o.trainer.iteration();
    if (o.evalEvery && i % o.evalEvery === 0) await o.trainer.evaluate(8, 1);
    times.push((performance.now() - t0) / 1000);
    const c = process.cpuUsage(c0);
    cpuTimes.push((c.user + c.system) / 1e6);
    const gpu = o.memory();
    if (gpu && i > warm) {
      worstGpu.poolBytes = Math.max(worstGpu.poolBytes, gpu.poolBytes);
      worstGpu.liveBuffers = Math.max(worstGpu.liveBuffers, gpu.liveBuffers);
      worstGpu.tensorBuffers = Math.max(worstGpu.tensorBuffers, gpu.tensorBuffers);
      worstGpu.bindGroups = Math.max(worstGpu.bindGroups, gpu.bindGroups);
    }
    if (points.includes(i)) {
      // Window: the last 10 iterations (fewer at the first point), so one slow outlier does not decide.
      const window = Math.min(10, Math.floor(i / 2));
      const p: SoakPoint = { iter: i, iterS: median(times.slice(-window)), cpuS: median(cpuTimes.slice(-window)), ...(await heap()), gpu };
      out.push(p);
      o.onPoint?.(p);
    }
  }
  const first = out[0];
  const later = out.slice(1);
  const check = (what: string, atWarmup: number, worst: number): SoakCheck => ({ what, atWarmup, worst, flat: worst <= atWarmup * (1 + FLAT_TOLERANCE) + 1e-9 });
  const checks: SoakCheck[] = [];
  if (first.gpu) {
    checks.push(check('GPU bytes held by the buffer pool', first.gpu.poolBytes, Math.max(first.gpu.poolBytes, worstGpu.poolBytes)));
    checks.push(check('live GPU buffers', first.gpu.liveBuffers, Math.max(first.gpu.liveBuffers, worstGpu.liveBuffers)));
    checks.push(check('pool buffers held by live tensors (end of iteration)', first.gpu.tensorBuffers, Math.max(first.gpu.tensorBuffers, worstGpu.tensorBuffers)));
    checks.push(check('cached bind groups', first.gpu.bindGroups, Math.max(first.gpu.bindGroups, worstGpu.bindGroups)));
  }
  // The heap's data part is judged; the whole heap is reported (its code space grows with JIT).
  checks.push(check('JS heap data after GC, compiled code excluded (MB)', first.dataMB, Math.max(first.dataMB, ...later.map((p) => p.dataMB))));
  checks.push(check('CPU seconds per iteration (median of window)', first.cpuS, Math.max(first.cpuS, ...later.map((p) => p.cpuS))));
  return { iters: o.iters, points: out, checks, flat: checks.every((c) => c.flat) };
}

export function formatSoak(r: SoakReport, label: string): string {
  const rows = r.points.map((p) =>
    [
      String(p.iter).padStart(6),
      p.iterS.toFixed(3).padStart(9),
      p.cpuS.toFixed(3).padStart(9),
      (p.gpu ? (p.gpu.poolBytes / MB).toFixed(2) : '-').padStart(10),
      String(p.gpu?.liveBuffers ?? '-').padStart(9),
      String(p.gpu?.tensorBuffers ?? '-').padStart(9),
      String(p.gpu?.bindGroups ?? '-').padStart(8),
      p.heapMB.toFixed(1).padStart(9),
      p.dataMB.toFixed(1).padStart(9),
      p.rssMB.toFixed(0).padStart(7),
    ].join(''),
  );
  const head = ['  iter', '   s/iter', ' cpu s/it', '  pool MB', ' buffers', ' tensors', ' bindgrp', '  heap MB', '  data MB', ' rss MB'].join('');
  const verdicts = r.checks.map(
    (c) =>
      `  ${c.flat ? 'flat ' : 'GROWS'}  ${c.what}: ${fmt(c.atWarmup)} at iteration ${r.points[0].iter}, worst after ${fmt(c.worst)} (${(((c.worst - c.atWarmup) / Math.max(c.atWarmup, 1e-12)) * 100).toFixed(1)}%)`,
  );
  return [
    `soak: ${label}, ${r.iters} iterations`,
    head,
    ...rows,
    `verdict (flat = within ${FLAT_TOLERANCE * 100}% of the warm-up value): ${r.flat ? 'FLAT' : 'NOT FLAT'}`,
    ...verdicts,
  ].join('\n');
}

function fmt(x: number): string {
  return Number.isInteger(x) ? String(x) : x.toFixed(3);
}

/** A small config for short soaks (CI): two prompts × two samples, short responses. */
export function tinySoakConfig(base: PpoConfig): PpoConfig {
  return { ...base, promptsPerBatch: 2, samplesPerPrompt: 2, maxResponseLength: 4, ppoEpochs: 1, miniBatches: 1, evalEvery: 5 };
}
