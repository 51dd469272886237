// The project's side of the peer comparison: the same PPO update (actor step and critic step of
// src/rl/update.ts: forward, clipped policy loss − 0.01·entropy / clipped value loss, backward,
// grad-norm, AdamW) and the same rollout (src/model/generate.ts, KV cache) at a peer shape, on a
// given backend, timed to the readback of both losses / the sampled tokens.
import type { Backend } from '../../backend/backend.ts';
import { Gpt } from '../../model/gpt.ts';
import { disposeRollout, generate, type PromptBatch } from '../../model/generate.ts';
import { withDefaults } from '../../rl/config.ts';
import { actorStep, criticStep, type Minibatch } from '../../rl/update.ts';
import { POLICY_STATS } from '../../ops/policyLoss.ts';
import { VALUE_STATS } from '../../ops/valueLoss.ts';
import { Rng } from '../../util/rng.ts';
import { timeIt, type Timed } from '../timing.ts';
import { CLIP, ENTROPY_COEF, VALUE_CLIP, type PeerShape } from './tfjsGpt.ts';

/** Host data of one peer batch, shared by the project and TF.js so both see the same numbers. */
export interface HostBatch {
  sequences: Int32Array; // (B, S)
  prompts: Int32Array; // (B, P)
  oldLogprobs: Float32Array; // (B, A)
  advantages: Float32Array; // (B, A)
  oldValues: Float32Array; // (B, A)
  returns: Float32Array; // (B, A)
}

export function hostBatch(s: PeerShape, seed: number): HostBatch {
  const rng = new Rng(seed);
  const { batch: B, prompt: P, response: A, vocab: V } = s;
  const S = P + A;
  const sequences = Int32Array.from({ length: B * S }, () => rng.int(3, V));
  const prompts = new Int32Array(B * P);
  for (let b = 0; b < B; b++) prompts.set(sequences.subarray(b * S, b * S + P), b * P);
  const n = B * A;
  return {
    sequences,
    prompts,
    // Near the uniform policy's −log V, so ratios start near 1 and some clip.
    oldLogprobs: Float32Array.from({ length: n }, () => -Math.log(V) + 0.1 * rng.normal()),
    advantages: Float32Array.from({ length: n }, () => rng.normal()),
    oldValues: Float32Array.from({ length: n }, () => 0.1 * rng.normal()),
    returns: Float32Array.from({ length: n }, () => 0.5 * rng.normal()),
  };
}

export interface ProjectTimes {
  update: Timed;
  rollout: Timed;
  /** Actor loss (policy loss − 0.01·entropy) and critic loss of the first update step. */
  firstLosses: [number, number];
}

/** The project's freshly initialised actor and critic (the critic = actor trunk + zero value head). */
export function makeModels(be: Backend, s: PeerShape): { actor: Gpt; critic: Gpt } {
  const actor = new Gpt(be, { vocabSize: s.vocab, nLayer: s.nLayer, nHead: s.nHead, dModel: s.dModel, maxSeq: s.prompt + s.response, head: 'lm' }, 1);
  return { actor, critic: actor.withHead('value') };
}

/** Times the project's update and rollout; trains (and then disposes) the given models. */
export async function timeProject(be: Backend, s: PeerShape, h: HostBatch, repeats: number, actor: Gpt, critic: Gpt): Promise<ProjectTimes> {
  const { batch: B, prompt: P, response: A } = s;
  const S = P + A;
  const cfg = withDefaults({
    clipLow: CLIP,
    clipHigh: CLIP,
    dualClip: null,
    valueClip: VALUE_CLIP,
    entropyCoef: ENTROPY_COEF,
    lossAgg: 'token-mean',
    useKlLoss: false,
    temperature: 1,
  });
  // TF.js's Adam has no clipping and no decay; the project still computes the grad norm.
  const opt = { lr: 1e-5, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, maxGradNorm: 0 };
  const ones = new Float32Array(B * S).fill(1);
  const actions = new Int32Array(B * A);
  for (let b = 0; b < B; b++) actions.set(h.sequences.subarray(b * S + P, (b + 1) * S), b * A);
  const mb: Minibatch = {
    n: B,
    index: Int32Array.from({ length: B }, (_, i) => i),
    sequences: be.tensor(h.sequences, [B, S], 'i32'),
    attnMask: be.tensor(ones, [B, S]),
    positions: be.tensor(
      Int32Array.from({ length: B * S }, (_, i) => i % S),
      [B, S],
      'i32',
    ),
    actionTokens: be.tensor(actions, [B, A], 'i32'),
    actionMask: be.tensor(new Float32Array(B * A).fill(1), [B, A]),
    oldLogprobs: be.tensor(h.oldLogprobs, [B, A]),
    refLogprobs: be.tensor(h.oldLogprobs, [B, A]),
    advantages: be.tensor(h.advantages, [B, A]),
    returns: be.tensor(h.returns, [B, A]),
    oldValues: be.tensor(h.oldValues, [B, A]),
    tisWeights: null,
  };
  let firstLosses: [number, number] | null = null;
  const update = await timeIt(
    be,
    async () => {
      const a = actorStep(actor, mb, P, A, cfg, opt, 0);
      const c = criticStep(critic, mb, P, A, cfg, opt);
      const [policy, entropy, value] = await be.readMany([a.policy, a.entropy, c.value]);
      firstLosses ??= [policy[POLICY_STATS.loss] - ENTROPY_COEF * entropy[0], value[VALUE_STATS.loss]];
      be.dispose(a.policy, a.entropy, a.klLoss, a.gradNorm, a.logprobs, c.value, c.gradNorm);
    },
    repeats,
    1,
  );
  const prompts: PromptBatch = {
    tokens: h.prompts,
    attnMask: new Float32Array(B * P).fill(1),
    positions: Int32Array.from({ length: B * P }, (_, i) => i % P),
    B,
    P,
  };
  // No EOS in range (ids ≥ 0 are tokens; −1 is never drawn), so every row samples all A tokens as TF.js does.
  const sample = { temperature: 1, topK: 0, topP: 1, seed: 5, eosId: -1, padId: 0 };
  const rollout = await timeIt(
    be,
    async () => {
      const r = generate(actor, prompts, A, sample);
      await be.read(r.sequences);
      disposeRollout(actor, r);
    },
    repeats,
    1,
  );
  be.dispose(mb.sequences, mb.attnMask, mb.positions, mb.actionTokens, mb.actionMask, mb.oldLogprobs, mb.refLogprobs, mb.advantages, mb.returns, mb.oldValues);
  actor.dispose();
  critic.dispose();
  return { update, rollout, firstLosses: firstLosses! };
}
