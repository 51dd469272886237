// Host↔device traffic of one PPO iteration at the page's default preset ("Learn arithmetic" with
// its shipped SFT checkpoint) on WebGPU: dispatches, submits, readbacks, tensor uploads and the
// bytes moved each way (`npm run bench -- --only transfers`). The first iteration also samples
// its own rollout; from the second on the rollout comes sampled ahead, so those rows are the
// steady state a run repeats.
import { readFileSync } from 'node:fs';
import type { Backend } from '../backend/backend.ts';
import { diffCounters, type GpuCounters } from '../gpu/recorder.ts';
import { withDefaults } from '../rl/config.ts';
import { presetValues } from '../rl/presets.ts';
import { PpoTrainer } from '../rl/trainer.ts';
import { settle, table } from './timing.ts';

const PRESET = 'Learn arithmetic';
const ITERATIONS = 3;

export interface TransferRow {
  iteration: number;
  counts: GpuCounters;
}

export async function printTransferBench(gpuBe: Backend): Promise<TransferRow[]> {
  const config = withDefaults(presetValues(PRESET));
  const ck = new Uint8Array(readFileSync(new URL('../../public/checkpoints/arithmetic.safetensors', import.meta.url)));
  const trainer = await PpoTrainer.create({ be: gpuBe, config, actorCheckpoint: ck });
  const rows: TransferRow[] = [];
  try {
    for (let iteration = 0; iteration < ITERATIONS; iteration++) {
      await settle(gpuBe);
      const before = { ...gpuBe.counters() };
      await trainer.iteration();
      rows.push({ iteration, counts: diffCounters(before, gpuBe.counters()) });
    }
  } finally {
    trainer.dispose();
  }
  console.log(`## Host↔device traffic per iteration ("${PRESET}", WebGPU)\n`);
  console.log(
    table(
      ['iteration', 'dispatches', 'submits', 'readbacks', 'uploads', 'upload bytes', 'readback bytes'],
      rows.map(({ iteration, counts: c }) => [
        iteration === 0 ? '0 (samples its own rollout)' : String(iteration),
        c.dispatches,
        c.submits,
        c.readbacks,
        c.uploads,
        c.uploadBytes,
        c.readbackBytes,
      ]),
    ),
  );
  console.log('');
  return rows;
}
