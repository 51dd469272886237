// `npm run bench -- --only peer [--config S|M]`: the PPO update (actor + critic) and the rollout
// written with TF.js the ordinary way (tfjsGpt.ts) on TF.js's WebGPU backend — built on the same
// GPUDevice as the project's kernels — and on its WASM backend, then the project's own update and
// rollout at the same shape on the same device, in the same process; prints the ratios.
import type { Backend } from '../../backend/backend.ts';
import type { BenchConfig } from '../model.ts';
import { fmt, table } from '../timing.ts';
import { hostBatch, makeModels, timeProject, type HostBatch } from './project.ts';
import { loadTf, type Tf } from './tfjsBackends.ts';
import { createModel, flopsPerRollout, flopsPerUpdate, rollout, updateStep, type EmbedMode, type PeerShape } from './tfjsGpt.ts';

export interface PeerRow {
  config: string;
  impl: string;
  /** Median ms and sample count; null when skipped. */
  updateMs: number | null;
  updateN: number;
  rolloutMs: number | null;
  rolloutN: number;
  losses?: [number, number];
  note: string;
}

interface InitialWeights {
  actor: Map<string, Float64Array>;
  critic: Map<string, Float64Array>;
}

export interface PeerOptions {
  adapter: GPUAdapter;
  device: GPUDevice;
  configs: BenchConfig[];
  repeats: number;
  /** A TF.js backend whose warm-up update step takes longer than this is measured once and its rollout skipped. */
  maxStepS: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function timeAsync(fn: () => Promise<unknown>, warmup: number, repeats: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < warmup + repeats; i++) {
    const t0 = performance.now();
    await fn();
    if (i >= warmup) out.push(performance.now() - t0);
  }
  return out;
}

async function timeTf(tf: Tf, backend: 'webgpu' | 'wasm', s: PeerShape, h: HostBatch, init: InitialWeights, o: PeerOptions, config: string): Promise<PeerRow> {
  await tf.setBackend(backend);
  await tf.ready();
  // The WASM backend lacks the UnsortedSegmentSum kernel that tf.gather's gradient needs.
  const embed: EmbedMode = backend === 'wasm' ? 'onehot' : 'gather';
  const { batch: B, prompt: P, response: A } = s;
  const S = P + A;
  const actor = createModel(tf, s, init.actor, false);
  const critic = createModel(tf, s, init.critic, true);
  const batch = {
    sequences: tf.tensor2d(h.sequences, [B, S], 'int32'),
    actions: tf.tensor2d(h.sequences, [B, S], 'int32').slice([0, P], [B, A]),
    mask: tf.ones([B, A]),
    oldLogprobs: tf.tensor2d(h.oldLogprobs, [B, A]),
    advantages: tf.tensor2d(h.advantages, [B, A]),
    oldValues: tf.tensor2d(h.oldValues, [B, A]),
    returns: tf.tensor2d(h.returns, [B, A]),
  };
  const prompts = tf.tensor2d(h.prompts, [B, P], 'int32');
  const actorOpt = tf.train.adam(1e-5);
  const criticOpt = tf.train.adam(1e-5);
  const label = backend === 'webgpu' ? 'TF.js 4.22 webgpu (same device)' : 'TF.js 4.22 wasm';
  const step = () => updateStep(tf, actor, critic, actorOpt, criticOpt, s, batch, embed);
  const t0 = performance.now();
  const losses = await step();
  const warmS = (performance.now() - t0) / 1000;
  const row: PeerRow = { config, impl: label, updateMs: null, updateN: 0, rolloutMs: null, rolloutN: 0, note: `embed ${embed}` };
  if (warmS > o.maxStepS) {
    row.updateMs = warmS * 1000;
    row.updateN = 1;
    row.note += `; warm-up step ${fmt(warmS)} s > ${o.maxStepS} s: update = that one step (includes compilation), rollout skipped`;
  } else {
    const u = await timeAsync(step, 0, o.repeats);
    row.updateMs = median(u);
    row.updateN = u.length;
    const r = await timeAsync(() => rollout(tf, actor, s, prompts, embed, 7), 1, o.repeats);
    row.rolloutMs = median(r);
    row.rolloutN = r.length;
  }
  row.losses = losses;
  tf.dispose([...Object.values(batch), prompts, ...actor.vars, ...critic.vars]);
  actorOpt.dispose();
  criticOpt.dispose();
  return row;
}

export async function printPeerBench(gpuBe: Backend, _cpuBe: Backend, o: PeerOptions): Promise<PeerRow[]> {
  const loaded = await loadTf(o.adapter, o.device);
  for (const [name, why] of Object.entries(loaded.failures)) console.log(`TF.js backend ${name} unavailable: ${why}`);
  const rows: PeerRow[] = [];
  for (const c of o.configs) {
    const s: PeerShape = { nLayer: c.nLayer, nHead: c.nHead, dModel: c.dModel, vocab: c.vocab, batch: c.batch, prompt: c.prompt, response: c.response };
    const h = hostBatch(s, 11);
    // Every implementation starts from the project's initial weights, so the first-step losses agree.
    const { actor, critic } = makeModels(gpuBe, s);
    const init: InitialWeights = { actor: await actor.readParams(), critic: await critic.readParams() };
    const mine = await timeProject(gpuBe, s, h, o.repeats, actor, critic);
    const own: PeerRow = {
      config: c.name,
      impl: 'this project, webgpu',
      updateMs: mine.update.medianMs,
      updateN: o.repeats,
      rolloutMs: mine.rollout.medianMs,
      rolloutN: o.repeats,
      losses: mine.firstLosses,
      note: `update ${mine.update.perCall.dispatches} dispatches/${mine.update.perCall.submits} submits; rollout ${mine.rollout.perCall.dispatches}/${mine.rollout.perCall.submits}`,
    };
    for (const b of loaded.backends) rows.push(await timeTf(loaded.tf, b, s, h, init, o, c.name));
    rows.push(own);
    console.log(
      `## TF.js peer, config ${c.name} (${c.nLayer}L ${c.nHead}H d${c.dModel} V${c.vocab} B${c.batch} ${c.prompt}+${c.response}; ` +
        `${fmt(flopsPerUpdate(s) / 1e9)} GFLOP/update, ${fmt(flopsPerRollout(s) / 1e9)} GFLOP/rollout without KV cache)\n`,
    );
    const cfgRows = rows.filter((r) => r.config === c.name);
    console.log(
      table(
        ['implementation', 'update ms (n)', 'rollout ms (n)', 'update: peer/project', 'rollout: peer/project', 'step-1 losses actor / critic', 'note'],
        cfgRows.map((r) => [
          r.impl,
          r.updateMs === null ? '—' : `${fmt(r.updateMs)} (${r.updateN})`,
          r.rolloutMs === null ? '—' : `${fmt(r.rolloutMs)} (${r.rolloutN})`,
          r === own || r.updateMs === null ? '' : `${fmt(r.updateMs / own.updateMs!)}×`,
          r === own || r.rolloutMs === null ? '' : `${fmt(r.rolloutMs / own.rolloutMs!)}×`,
          r.losses ? `${r.losses[0].toFixed(5)} / ${r.losses[1].toFixed(5)}` : '',
          r.note,
        ]),
      ),
    );
    // Same weights and batch: the step-1 losses must agree (float32 rounding of different kernels).
    let worst = 0;
    for (const r of cfgRows) {
      if (!r.losses || r === own) continue;
      for (const i of [0, 1]) worst = Math.max(worst, Math.abs(r.losses[i] - own.losses![i]) / Math.max(1e-3, Math.abs(own.losses![i])));
    }
    console.log(
      `\nSame initial weights and batch everywhere: step-1 losses ${worst <= 1e-3 ? 'agree' : 'DISAGREE'} with the project's ` +
        `(largest relative difference ${worst.toExponential(1)}, limit 1e-3), so the implementations ${worst <= 1e-3 ? 'do the same math' : 'differ: check before reading the ratios'}.`,
    );
    console.log(
      "update = actor + critic (forward, clipped loss, backward, Adam); rollout = B prompts × A sampled tokens; TF.js rollout recomputes the prefix (no KV cache), the project's uses its KV cache.\n",
    );
  }
  return rows;
}
