// The NaN guard's undo point: device copies of every weight and both optimisers, taken before an
// iteration, so a non-finite iteration is undone without any readback. The reference never
// moves, so it needs no copy.
import type { Backend } from '../backend/backend.ts';
import type { ModelSnapshot, SnapshotModel } from '../model/sequenceModel.ts';
import type { PpoConfig } from './config.ts';

/** Device copies of the trainer's moving state (see PpoTrainer.deviceSnapshot). */
export interface TrainerSnapshot {
  actor: ModelSnapshot;
  critic: ModelSnapshot | null;
  iter: number;
  klBeta: number;
  config: PpoConfig;
}

/** A snapshot of the models and counters, reusing `prev`'s buffers (freeing a critic copy no longer needed). */
export function takeSnapshot(
  be: Backend,
  now: { actor: SnapshotModel; critic: SnapshotModel | null; iter: number; klBeta: number; config: PpoConfig },
  prev: TrainerSnapshot | null,
): TrainerSnapshot {
  const snap: TrainerSnapshot = {
    actor: now.actor.snapshotInto(prev?.actor ?? null),
    critic: now.critic ? now.critic.snapshotInto(prev?.critic ?? null) : null,
    iter: now.iter,
    klBeta: now.klBeta,
    config: { ...now.config },
  };
  if (prev?.critic && !snap.critic) be.dispose(prev.critic.params, prev.critic.m, prev.critic.v);
  return snap;
}

/** Puts the snapshot's weights and optimiser moments back into the models. */
export function restoreModels(s: TrainerSnapshot, actor: SnapshotModel, critic: SnapshotModel | null): void {
  actor.restoreSnapshot(s.actor);
  if (s.critic && critic) critic.restoreSnapshot(s.critic);
}

export function disposeSnapshot(be: Backend, s: TrainerSnapshot): void {
  be.dispose(s.actor.params, s.actor.m, s.actor.v, s.critic?.params, s.critic?.m, s.critic?.v);
}
