// What the exported job says about the playground's model: the size of the model that actually
// trained (its SFT checkpoint's, which the worker reports), fine-tuned by PPO, not trained from
// scratch; and, where the Layers / Attention heads / Model width knobs say otherwise, that they did
// not apply, so no knob is silently ignored in the export either.
import { SFT_MODEL_DIMS } from '../model/config.ts';
import type { PpoConfig } from '../rl/config.ts';

export interface ModelDims {
  nLayer: number;
  nHead: number;
  dModel: number;
}

export const dimsText = (m: ModelDims): string => `${m.nLayer}-layer, ${m.nHead}-head, d_model ${m.dModel}`;

/** The model that trained: the one the page reports, else the shipped SFT checkpoints' size. */
export const trainedDims = (model: ModelDims | undefined): ModelDims => model ?? SFT_MODEL_DIMS;

/** The launch script's `# model` lines. */
export function modelNotes(c: PpoConfig, model: ModelDims | undefined): string[] {
  const m = trainedDims(model);
  const notes = [`# model: the playground fine-tunes a ${dimsText(m)} character transformer (its SFT checkpoint) with PPO; here MODEL is a pretrained instruct model`];
  if (c.nLayer !== m.nLayer || c.nHead !== m.nHead || c.dModel !== m.dModel) {
    notes.push(
      `# model knobs: Layers ${c.nLayer}, Attention heads ${c.nHead}, Model width ${c.dModel} did not apply; the run trained the SFT checkpoint's ${m.nLayer} × ${m.nHead} × ${m.dModel}`,
    );
  }
  return notes;
}
