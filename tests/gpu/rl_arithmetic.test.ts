// PPO on the arithmetic task on WebGPU (Dawn; SwiftShader in CI), starting from the shipped SFT
// checkpoint: a model that learned to add from a tutor and then imitated a sloppy student who
// forgets the carry 90% of the time (greedy: 0% on carry problems, 100% on no-carry ones). The
// recipe is the page's "Learn arithmetic" preset (RLOO, 16 prompts × 4 samples, 80% of them carry
// problems, 3-token responses, one epoch of 2 minibatches, lr 2.5e-5, k3 KL loss 0.1), cut to
// ITERS iterations. Measured on the float64 CPU backend (seeds 1 and 2, 64 held-out prompts): greedy
// carry accuracy 0% → 75–77% after 20 iterations with no-carry accuracy still 100%.
// Evaluated on all 231 held-out operand pairs (never trained on), so the split by carry is exact:
// PPO must bring the carry back without trading the no-carry answers for it ("always carry").
import { describe, expect, it } from 'vitest';
import type { PpoConfig } from '../../src/rl/config.ts';
import { DEFAULT_CONFIG } from '../../src/rl/config.ts';
import { PpoTrainer } from '../../src/rl/trainer.ts';
import { arithmeticTask } from '../../src/tasks/arithmetic.ts';
import { presetValues } from '../../src/rl/presets.ts';
import { webgpuBackend } from '../helpers/backends.ts';
import { expectFiniteMetrics, shippedCheckpoint } from '../helpers/rl.ts';

const SEED = Number(process.env.PPO_ARITH_SEED ?? 1);
const ITERS = 20;
// All 231 held-out problems: greedy accuracy is then the policy's exact held-out accuracy.
const EVAL_PROMPTS = 231;
const EVAL_DRAWS = 4;

// The page's "Learn arithmetic" preset.
const CONFIG: PpoConfig = { ...DEFAULT_CONFIG, ...presetValues('Learn arithmetic'), seed: SEED };

describe('PPO learns arithmetic on WebGPU', () => {
  it('held-out accuracy on carry problems rises while no-carry accuracy holds; no held-out prompt is trained on', { timeout: 600_000 }, async () => {
    const ck = shippedCheckpoint('arithmetic');
    expect(ck, 'public/checkpoints/arithmetic.safetensors is shipped').not.toBeNull();
    const be = await webgpuBackend();
    const trainer = await PpoTrainer.create({ be, config: CONFIG, actorCheckpoint: ck! });
    // Every held-out problem (231 operand pairs picked by the task's hash).
    const heldOut = new Set(arithmeticTask.evalPrompts(EVAL_PROMPTS));

    const before = await trainer.evaluate(EVAL_PROMPTS, EVAL_DRAWS);
    for (let i = 0; i < ITERS; i++) {
      const r = await trainer.iteration();
      expectFiniteMetrics(r.metrics, `iteration ${i}`);
      for (const p of trainer.lastRollout!.prompts) expect(heldOut.has(p), `held-out prompt ${p} trained on at iteration ${i}`).toBe(false);
    }
    const after = await trainer.evaluate(EVAL_PROMPTS, EVAL_DRAWS);
    trainer.dispose();
    console.log(`[rl_arithmetic] seed ${SEED}: before ${JSON.stringify(before)} after ${JSON.stringify(after)}`);

    for (const [k, v] of Object.entries({ ...before, ...after })) expect(Number.isFinite(v), `eval ${k} = ${v}`).toBe(true);
    const g0 = before.greedy_accuracy_carry,
      g1 = after.greedy_accuracy_carry;
    const s0 = before.accuracy_carry,
      s1 = after.accuracy_carry;
    expect(g1, `greedy accuracy on carry problems ${g0} → ${g1}`).toBeGreaterThanOrEqual(g0 + 0.5);
    expect(s1, `sampled accuracy on carry problems ${s0} → ${s1}`).toBeGreaterThanOrEqual(s0 + 0.3);
    expect(after.greedy_accuracy, `greedy accuracy ${before.greedy_accuracy} → ${after.greedy_accuracy}`).toBeGreaterThanOrEqual(before.greedy_accuracy + 0.25);
    // No shortcut: the no-carry answers the SFT model had right stay right.
    const n0 = before.greedy_accuracy_no_carry,
      n1 = after.greedy_accuracy_no_carry;
    expect(n1, `greedy accuracy on no-carry problems ${n0} → ${n1}`).toBeGreaterThanOrEqual(n0 - 0.1);
  });
});
