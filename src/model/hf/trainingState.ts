// What a LoRA run needs beyond its PEFT files to go on exactly where it stopped: each role's flat
// parameters, AdamW moments and step count (loraParams.ts), in one safetensors file. PEFT's file
// holds the actor's adapters in F32 and nothing of the optimizer or the critic; with this file a
// continued run takes the same steps as one that never stopped (tests/unit/hf_training.test.ts).
// Values are stored in F32 when every one of them is an f32 (the WebGPU backend), else in F64 (the
// float64 CPU backend), so the copy is always exact.
import type { Backend } from '../../backend/backend.ts';
import { decodeSafetensors, encodeSafetensors, type SafeTensor } from '../safetensors.ts';
import type { HfModel } from './hfModel.ts';
import { disposeLoraTrainable, type LoraTrainable, newLoraTrainable } from './loraParams.ts';

const FORMAT = 'ppo-playground-lora-training-state';
const PARTS = ['params', 'm', 'v'] as const;

type Role = 'actor' | 'critic';

/** The LoRA settings a state belongs to, in one string (targets as a set: PEFT's list has no order). */
function loraKey({ r, alpha, rslora, targets }: LoraTrainable['settings']): string {
  return JSON.stringify({ r, alpha, rslora, targets: [...targets].sort() });
}

/** Each role's parameters and moments as tensors of the file, read back together. */
async function roleTensors(be: Backend, roles: [Role, LoraTrainable][]): Promise<SafeTensor[]> {
  const parts = roles.flatMap(([role, t]) => PARTS.map((part) => ({ name: `${role}.${part}`, tensor: t[part], size: t.size })));
  const values = await be.readMany(parts.map((p) => p.tensor)); // each (size) float64 on the host
  return parts.map(({ name, size }, i) => {
    const f32 = values[i].every((x) => Math.fround(x) === x);
    return { name, dtype: f32 ? 'F32' : 'F64', shape: [size], data: f32 ? Float32Array.from(values[i]) : values[i] };
  });
}

/** The actor's (and the critic's, when there is one) parameters, moments and step counts. */
export async function encodeTrainingState(be: Backend, actor: LoraTrainable, critic: LoraTrainable | null): Promise<Uint8Array> {
  const tensors = await roleTensors(
    be,
    critic
      ? [
          ['actor', actor],
          ['critic', critic],
        ]
      : [['actor', actor]],
  );
  return encodeSafetensors(tensors, {
    format: FORMAT,
    actor_steps: String(actor.steps),
    critic_steps: critic ? String(critic.steps) : '',
    lora: loraKey(actor.settings),
  });
}

function fail(why: string): never {
  throw new Error(`the training state: ${why}`);
}

function steps(meta: Record<string, string>, key: string): number {
  const n = Number(meta[key]);
  if (!Number.isSafeInteger(n) || n < 0) fail(`${key} is ${JSON.stringify(meta[key])}; a whole number ≥ 0 is expected`);
  return n;
}

/**
 * Puts a training state on `actor` (already holding the PEFT file's adapters) and returns the
 * critic it carries (null when it has none). Refused, changing nothing, when the file is not one
 * of ours, its sizes are not this model's and adapter's, or its actor is not `actor` to F32 precision.
 */
export async function applyTrainingState(model: HfModel, actor: LoraTrainable, bytes: Uint8Array): Promise<LoraTrainable | null> {
  const be = model.be;
  let file: ReturnType<typeof decodeSafetensors>;
  try {
    file = decodeSafetensors(bytes);
  } catch (e) {
    fail((e as Error).message);
  }
  if (file.metadata.format !== FORMAT) fail(`format is ${JSON.stringify(file.metadata.format)}, not ${FORMAT}`);
  if (file.metadata.lora !== loraKey(actor.settings)) fail(`it belongs to another adapter (${file.metadata.lora}), not this one (${loraKey(actor.settings)})`);
  const part = (role: Role, name: (typeof PARTS)[number], size: number): Float64Array => {
    const t = file.tensors.get(`${role}.${name}`);
    if (!t) fail(`tensor ${role}.${name} is missing`);
    if (t.shape.length !== 1 || t.shape[0] !== size) fail(`tensor ${role}.${name} has shape [${t.shape}]; [${size}] is expected for this model and adapter`);
    if (t.dtype === 'I32') fail(`tensor ${role}.${name} is I32; F32 or F64 is expected`);
    return Float64Array.from(t.data);
  };
  const actorParams = part('actor', 'params', actor.size);
  const current = await be.read(actor.params);
  for (let i = 0; i < actor.size; i++) {
    if (Math.fround(actorParams[i]) !== Math.fround(current[i])) fail(`its actor differs from the adapter's weights at element ${i}: the two files were not saved together`);
  }
  const actorM = part('actor', 'm', actor.size);
  const actorV = part('actor', 'v', actor.size);
  const actorSteps = steps(file.metadata, 'actor_steps');
  let critic: LoraTrainable | null = null;
  if (file.metadata.critic_steps !== '') {
    const criticSteps = steps(file.metadata, 'critic_steps');
    const fresh = newLoraTrainable(model, actor.settings, 0, true);
    try {
      const values = PARTS.map((name) => part('critic', name, fresh.size));
      for (const [i, name] of PARTS.entries()) be.write(fresh[name], values[i]);
    } catch (e) {
      disposeLoraTrainable(be, fresh);
      throw e;
    }
    fresh.steps = criticSteps;
    critic = fresh;
  }
  be.write(actor.params, actorParams);
  be.write(actor.m, actorM);
  be.write(actor.v, actorV);
  actor.steps = actorSteps;
  return critic;
}
