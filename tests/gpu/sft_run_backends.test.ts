// The page's SFT on WebGPU against the same run on the float64 CPU backend (whose bytes equal
// `npm run pretrain`'s: tests/cli/sft_cli_page.test.ts): runSft with the same task, seed,
// size and a reduced step count, weights compared parameter by parameter.
//
// Tolerance: float32 kernels against float64 make gradients differ in the 6th–7th digit, and
// AdamW's division by √v can magnify that for a parameter whose gradient is near zero. Measured
// (Dawn on SwiftShader, 2026-11-27, this test's printout): max |Δweight| 2.8e-6 and max |Δloss|
// 1.9e-7 after 6 steps. The bounds, 1e-4 and 1e-5, leave ~35× and ~50× room for another adapter's
// summation order, and stay 30× below one step's update at the peak lr (3e-3), which is what a
// wrong kernel or a different batch or seed moves every weight by.
import { describe, expect, it } from 'vitest';
import { parseCheckpoint } from '../../src/model/checkpoint.ts';
import { runSft } from '../../src/rl/sftRun.ts';
import { cpuBackend, webgpuBackend } from '../helpers/backends.ts';

const OPTS = { task: 'arithmetic', dims: { nLayer: 2, nHead: 2, dModel: 64 }, seed: 5, phaseSteps: 3 };
const MAX_WEIGHT_DIFF = 1e-4;
const MAX_LOSS_DIFF = 1e-5;

describe('SFT in the tab on WebGPU follows the CPU run', () => {
  it('same losses and weights within the stated tolerance', async () => {
    const losses: Record<string, number[]> = { gpu: [], cpu: [] };
    const gpu = await runSft(await webgpuBackend(), OPTS, { onProgress: (p) => losses.gpu.push(p.loss) });
    const cpu = await runSft(cpuBackend, OPTS, { onProgress: (p) => losses.cpu.push(p.loss) });
    expect(losses.gpu).toHaveLength(6);
    const lossDiff = Math.max(...losses.gpu.map((l, i) => Math.abs(l - losses.cpu[i])));
    const a = parseCheckpoint(gpu.bytes);
    const b = parseCheckpoint(cpu.bytes);
    expect(a.config).toEqual(b.config);
    expect([...a.params.keys()]).toEqual([...b.params.keys()]);
    let maxDiff = 0;
    let moved = 0;
    for (const [name, t] of a.params) {
      const u = b.params.get(name)!.data;
      for (let i = 0; i < t.data.length; i++) {
        maxDiff = Math.max(maxDiff, Math.abs(t.data[i] - u[i]));
        moved += Math.abs(u[i]);
      }
    }
    console.log(`SFT WebGPU vs CPU, 6 steps at 2×2×64: max |Δweight| ${maxDiff.toExponential(2)}, max |Δloss| ${lossDiff.toExponential(2)}`);
    expect(moved).toBeGreaterThan(0);
    expect(lossDiff).toBeLessThan(MAX_LOSS_DIFF);
    expect(maxDiff).toBeLessThan(MAX_WEIGHT_DIFF);
  });
});
