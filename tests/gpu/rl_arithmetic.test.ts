// PPO on the arithmetic task on WebGPU (Dawn; SwiftShader in CI), starting from the shipped SFT
// checkpoint, a "sloppy student" that adds well but forgets the carry 90% of the time. The recipe is
// the page's "Learn arithmetic" preset (RLOO, 16 prompts × 4 samples, 80% of them carry problems,
// 3-token responses, one epoch of 2 minibatches, lr 5e-5, β = 0), cut to ITERS iterations.
// What it learns, measured on all 231 held-out operand pairs (never trained on) with the float64
// CPU backend, seed 1, 40 iterations: greedy accuracy on carry problems 0% → 88%, but on no-carry
// problems 100% → 4%: with 80% carry prompts the policy mostly learns the shortcut "always carry"
// rather than to detect the carry, so overall held-out accuracy stays near 48%. This test asserts the
// part that is learned (carry problems, sampled and greedy) and records the rest in its log; the
// shortcut is an open problem of the task design (see NOTES.md).
import { describe, expect, it } from 'vitest';
import type { PpoConfig } from '../../src/rl/config.ts';
import { DEFAULT_CONFIG } from '../../src/rl/config.ts';
import { PpoTrainer } from '../../src/rl/trainer.ts';
import { arithmeticTask } from '../../src/tasks/arithmetic.ts';
import { presetValues } from '../../src/rl/presets.ts';
import { webgpuBackend } from '../helpers/backends.ts';
import { expectFiniteMetrics, shippedCheckpoint } from './rl_helpers.ts';

const SEED = Number(process.env.PPO_ARITH_SEED ?? 1);
const ITERS = 40;
// All 231 held-out problems: greedy accuracy is then the policy's exact held-out accuracy.
const EVAL_PROMPTS = 231;
const EVAL_DRAWS = 4;

// The page's "Learn arithmetic" preset.
const CONFIG: PpoConfig = { ...DEFAULT_CONFIG, ...presetValues('Learn arithmetic'), seed: SEED };

describe('PPO learns arithmetic on WebGPU', () => {
  it('held-out greedy and sampled accuracy rise above the SFT baseline; no held-out prompt is trained on', { timeout: 600_000 }, async () => {
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
    const g0 = before.greedy_accuracy_carry, g1 = after.greedy_accuracy_carry;
    const s0 = before.accuracy_carry, s1 = after.accuracy_carry;
    expect(g1, `greedy accuracy on carry problems ${g0} → ${g1}`).toBeGreaterThanOrEqual(g0 + 0.3);
    expect(s1, `sampled accuracy on carry problems ${s0} → ${s1}`).toBeGreaterThanOrEqual(s0 + 0.3);
  });
});
