// The hf bench's RL rows (issue #32): one PPO-LoRA (gae, a critic with its own adapters and value
// head) and one GRPO-LoRA (group_norm, no critic) iteration of hfPpo.ts on the hf bench's shapes,
// random device weights, LoRA r 8 on every projection, random prompt ids, no EOS (every response
// runs its full length), a rule reward on the ids. One warm-up iteration (pipelines compiled, pool
// filled), then `repeats` timed with hfPpoIteration's stage clock, which syncs the device at each
// stage's end; the row is the iteration of median time with its own stages (so they add up).
// Bytes: the pool's tensor bytes after building the base, the actor (adapters + gradients + AdamW
// m, v + decay mask) and the critic (the same + its head), the pool's peak over the timed
// iterations and what it holds after them (each size as often as it was in use at once), beside
// the memory plan of the training run. Checkpoint: what the page's worker posts during a run
// (hfTraining.ts adapterFiles: the actor's PEFT files and the training state, critic included),
// made after the timed iterations, the median of `repeats`, with the bytes it hands the page.
import type { Backend } from '../backend/backend.ts';
import type { WebGpuBackend } from '../backend/webgpu/webgpuBackend.ts';
import type { HfArch } from '../model/hf/arch.ts';
import { maxBindingBytes } from '../model/hf/deviceWeights.ts';
import { HfModel } from '../model/hf/hfModel.ts';
import { backendOffer } from '../model/hf/loadPlan.ts';
import { LORA_TARGETS } from '../model/hf/lora.ts';
import { disposeLoraTrainable, newLoraTrainable } from '../model/hf/loraParams.ts';
import { formatBytes, planMemory } from '../model/hf/memoryPlan.ts';
import { randomDeviceWeights } from '../model/hf/randomWeights.ts';
import { type HfPpoConfig, type HfPpoStage, hfPpoIteration } from '../rl/hf/hfPpo.ts';
import { Rng } from '../util/rng.ts';
import { adapterFiles } from '../worker/hfTraining.ts';
import { decodeFlops, type HfBenchRow, type HfBenchShape, type HfRlSizes, prefillFlops, printHfBench, selectHfShapes, shapeArch, tokenFlops } from './hf.ts';
import { settle, table } from './timing.ts';

export const RL_ESTIMATORS = [
  ['PPO-LoRA', 'gae'],
  ['GRPO-LoRA', 'group_norm'],
] as const;

export const RL_STAGES: HfPpoStage[] = ['rollout', 'reward', 'logprobs', 'values', 'advantages', 'actor update', 'critic update'];

export interface HfRlRow {
  shape: string;
  run: string; // PPO-LoRA or GRPO-LoRA
  sizes: HfRlSizes;
  iterationS: number;
  stageMs: Record<HfPpoStage, number>;
  /** Generated tokens / rollout time; trained (scored) positions / actor + critic update time. */
  rolloutTokensPerS: number;
  updateTokensPerS: number;
  rolloutGflops: number;
  updateGflops: number;
  baseBytes: number;
  actorBytes: number;
  criticBytes: number;
  /** The pool's most tensor bytes at once over the timed iterations (base and roles included). */
  peakBytes: number;
  /** What a pool holding only the base and roles before the timed iterations holds after them: each size as often as it was in use at once. */
  heldBytes: number;
  planBytes: number;
  /** The worker's checkpoint after an iteration: seconds to read and encode it, and its bytes (PEFT config and weights, training state). */
  checkpointS: number;
  checkpointBytes: number;
}

/** LORA_TARGETS under the memory plan's names. */
const PLAN_TARGETS = ['q', 'k', 'v', 'o', 'gate', 'up', 'down'] as const;

/**
 * FLOPs of one update pass, forward with the tape then backward, over B sequences of P + A
 * positions (scoring.ts runs them all; attention counted causal), with the actor's logits at the
 * A positions that predict a response token when `withLogits` (a critic's value head is O(D)).
 * Backward ≈ forward plus the attention once more: frozen weights get no weight gradient, so each
 * projection's backward (and the LM head's) is one product g·W of the forward's size, not the 2×
 * of full fine-tuning; attention's backward has twice its forward's products (dQ and dK through
 * the scores, dV and the probabilities). Left out: the adapters' r = 8 products (about 3.5 % of
 * the projections' at SmolLM2's widths, forward and backward), norms, rope, softmax.
 */
export function updateFlops(a: HfArch, B: number, P: number, A: number, withLogits: boolean): number {
  let perRow = 0;
  for (let p = 0; p < P + A; p++) {
    const logits = withLogits && p >= P - 1 && p < P + A - 1;
    const fwd = tokenFlops(a, p + 1, logits);
    const attention = fwd - tokenFlops(a, 0, logits);
    perRow += 2 * fwd + attention;
  }
  return B * perRow;
}

const ruleReward = (V: number) => (_p: readonly (readonly number[])[], responses: readonly (readonly number[])[]) =>
  responses.map((r) => r.filter((id) => id < V / 2).length / Math.max(1, r.length));

/** Times one PPO-LoRA and one GRPO-LoRA iteration at shape `s`; a plan's verdict instead where it does not fit. */
export async function benchHfRl(be: WebGpuBackend, s: HfBenchShape & { rl: HfRlSizes }, repeats = 1, seed = 7): Promise<(HfRlRow | (Skipped & { run: string }))[]> {
  const a = shapeArch(s);
  const { prompts: nPrompts, samples, prompt, newTokens } = s.rl;
  const B = nPrompts * samples;
  const offer = backendOffer(be);
  if (!offer) throw new Error('the hf bench runs on WebGPU');
  const plans = RL_ESTIMATORS.map(([, est]) =>
    planMemory(
      a,
      {
        batch: B,
        promptTokens: prompt,
        responseTokens: newTokens,
        trainBatch: B,
        lora: { rank: 8, targets: [...PLAN_TARGETS], roles: est === 'gae' ? 2 : 1 },
        valueHead: est === 'gae',
        weightDtype: 'f16',
        nanGuard: false, // the bench times hfPpoIteration itself, without HfNanGuard's copies
      },
      offer,
    ),
  );
  if (plans.every((p) => !p.fits)) return RL_ESTIMATORS.map(([run], i) => ({ shape: s.name, run, skipped: plans[i].message }));
  await settle(be);
  const before = be.rt.memory().tensorBytes;
  const model = HfModel.fromWeights(be, a, randomDeviceWeights(be, a, 'f16', seed, maxBindingBytes(be)));
  await settle(be);
  const baseBytes = be.rt.memory().tensorBytes - before;
  const r = new Rng(seed);
  const uniquePrompts = Array.from({ length: nPrompts }, () => Array.from({ length: prompt }, () => r.int(0, a.vocab)));
  const settings = { r: 8, alpha: 16, rslora: false, targets: LORA_TARGETS };
  const hp = { lr: 1e-4, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, maxGradNorm: 1 };
  const rows: (HfRlRow | (Skipped & { run: string }))[] = [];
  try {
    for (const [i, [run, estimator]] of RL_ESTIMATORS.entries()) {
      if (!plans[i].fits) {
        rows.push({ shape: s.name, run, skipped: plans[i].message });
        continue;
      }
      const bytesNow = async () => {
        await settle(be);
        return be.rt.memory().tensorBytes;
      };
      const b0 = await bytesNow();
      const actor = newLoraTrainable(model, settings, seed + 1);
      const b1 = await bytesNow();
      const critic = estimator === 'gae' ? newLoraTrainable(model, settings, seed + 2, true) : null;
      const b2 = await bytesNow();
      const cfg: HfPpoConfig = {
        estimator,
        samplesPerPrompt: samples,
        maxNewTokens: newTokens,
        temperature: 1,
        topP: 1,
        seed,
        klCoef: 0.05,
        klEstimator: 'k1',
        gamma: 1,
        lam: 0.95,
        ppoEpochs: 1,
        miniBatches: 1,
        policy: { clipLow: 0.2, clipHigh: 0.2, clipC: null, agg: 'token-mean' },
        value: { clip: 0.5, agg: 'token-mean' },
        actorHp: hp,
        criticHp: hp,
      };
      const roles = { model, actor, critic, eosIds: [], padId: 0 };
      try {
        await hfPpoIteration(roles, uniquePrompts, ruleReward(a.vocab), cfg, 0); // warm-up
        await settle(be);
        be.rt.pool.resetPeak();
        const timed: { iterationS: number; stageMs: Record<HfPpoStage, number> }[] = [];
        for (let i = 1; i <= repeats; i++) {
          const stageMs = Object.fromEntries(RL_STAGES.map((x) => [x, 0])) as Record<HfPpoStage, number>;
          const t0 = performance.now();
          await hfPpoIteration(roles, uniquePrompts, ruleReward(a.vocab), { ...cfg, onStage: (x, ms) => (stageMs[x] += ms) }, i);
          timed.push({ iterationS: (performance.now() - t0) / 1000, stageMs });
        }
        const { iterationS, stageMs } = timed.sort((x, y) => x.iterationS - y.iterationS)[Math.floor(repeats / 2)];
        const checkpoints: { s: number; bytes: number }[] = [];
        for (let i = 0; i < repeats; i++) {
          await settle(be);
          const t0 = performance.now();
          const files = await adapterFiles({ model, label: s.name }, actor, { critic });
          checkpoints.push({ s: (performance.now() - t0) / 1000, bytes: files.config.length + files.weights.length + (files.state?.length ?? 0) });
        }
        const checkpoint = checkpoints.sort((x, y) => x.s - y.s)[Math.floor(repeats / 2)];
        const updateMs = stageMs['actor update'] + stageMs['critic update'];
        const passFlops = updateFlops(a, B, prompt, newTokens, true) + (critic ? updateFlops(a, B, prompt, newTokens, false) : 0);
        const rolloutFlops = prefillFlops(a, B, prompt) + decodeFlops(a, B, prompt, newTokens);
        rows.push({
          shape: s.name,
          run,
          sizes: s.rl,
          iterationS,
          stageMs,
          rolloutTokensPerS: (B * newTokens) / (stageMs.rollout / 1000),
          updateTokensPerS: ((critic ? 2 : 1) * B * (prompt + newTokens)) / (updateMs / 1000),
          rolloutGflops: rolloutFlops / (stageMs.rollout / 1000) / 1e9,
          updateGflops: passFlops / (updateMs / 1000) / 1e9,
          baseBytes,
          actorBytes: b1 - b0,
          criticBytes: b2 - b1,
          peakBytes: be.rt.pool.peakInUseBytes - before,
          heldBytes: be.rt.pool.heldSincePeakReset() - before,
          planBytes: plans[i].totalBytes,
          checkpointS: checkpoint.s,
          checkpointBytes: checkpoint.bytes,
        });
      } finally {
        disposeLoraTrainable(be, actor);
        if (critic) disposeLoraTrainable(be, critic);
      }
    }
  } finally {
    model.dispose();
    await settle(be);
  }
  return rows;
}

/** The RL rows' table: seconds per stage, tokens/s, bytes (base once, per role, peak), GFLOP/s. */
export function hfRlTable(rows: HfRlRow[]): string {
  const sec = (ms: number) => ms / 1000;
  return table(
    [
      'shape',
      'run',
      'P × G × (prompt + new)',
      's / iteration',
      ...RL_STAGES.map((x) => `${x} s`),
      'gen tok/s',
      'train tok/s',
      'rollout GFLOP/s',
      'update GFLOP/s',
      'base',
      'actor',
      'critic',
      'peak',
      'roles / base',
      'peak / base',
      'held',
      'plan',
      'checkpoint s',
      'checkpoint',
    ],
    rows.map((r) => [
      r.shape,
      r.run,
      `${r.sizes.prompts} × ${r.sizes.samples} × (${r.sizes.prompt} + ${r.sizes.newTokens})${r.sizes.reduced ? ` (${r.sizes.reduced})` : ''}`,
      r.iterationS,
      ...RL_STAGES.map((x) => sec(r.stageMs[x])),
      r.rolloutTokensPerS,
      r.updateTokensPerS,
      r.rolloutGflops,
      r.updateGflops,
      formatBytes(r.baseBytes),
      formatBytes(r.actorBytes),
      formatBytes(r.criticBytes),
      formatBytes(r.peakBytes),
      (r.baseBytes + r.actorBytes + r.criticBytes) / r.baseBytes,
      r.peakBytes / r.baseBytes,
      formatBytes(r.heldBytes),
      formatBytes(r.planBytes),
      r.checkpointS,
      formatBytes(r.checkpointBytes),
    ]),
  );
}

type Skipped = { shape: string; skipped: string };

/** `--only hf`: the generation rows (hf.ts), then a PPO-LoRA and a GRPO-LoRA iteration at each shape that has an RL batch. */
export async function printHfSection(
  gpuBe: Backend,
  cpuBe: Backend,
  ctx: { repeats: number; hfShapes?: string },
): Promise<{ generation: (HfBenchRow | Skipped)[]; rl: (HfRlRow | (Skipped & { run: string }))[] }> {
  const generation = await printHfBench(gpuBe, cpuBe, ctx);
  const be = gpuBe as WebGpuBackend;
  const { shapes } = selectHfShapes(ctx.hfShapes, be.rt.cpuAdapter);
  console.log('## One PPO-LoRA and one GRPO-LoRA iteration (LoRA r 8 on every projection; the median of --repeats iterations after one warm-up)\n');
  const rl: (HfRlRow | (Skipped & { run: string }))[] = [];
  for (const s of shapes) if (s.rl) rl.push(...(await benchHfRl(be, { ...s, rl: s.rl }, ctx.repeats)));
  console.log(hfRlTable(rl.filter((r): r is HfRlRow => !('skipped' in r))));
  for (const r of rl) if ('skipped' in r) console.log(`\n${r.shape} ${r.run}: not run. ${r.skipped}`);
  console.log('');
  return { generation, rl };
}
