// The written reward function of a run in progress can be edited: after a refused sample the run
// pauses, the user fixes the function, and the same run goes on. Other settings wait for the next
// run (Reset); this one goes to the worker at once, applies from the next iteration, and is saved
// in the run's config, so the run record says which function trained it from then on.
import type { StoreApi } from 'zustand';
import type { PpoConfig } from '../rl/config.ts';
import type { AppState } from './appStore.ts';
import { TAB_READ_ONLY } from './notices.ts';
import { rewardFunctionBlock } from './rewardFunctionLink.ts';

/** Sends a run's config with the edited function (configSync.ts), returning whether it went. */
export function syncRewardFunction(store: StoreApi<AppState>, send: (config: PpoConfig) => boolean): () => void {
  return store.subscribe((state, prev) => {
    const source = state.config.rewardFunction;
    if (source === prev.config.rewardFunction) return;
    if (state.rewardFailure !== null && state.rewardFailure.source !== source) state.setRewardFailure(null);
    const run = state.runs.find((r) => r.id === state.activeRunId);
    if (run?.config.rewardSource !== 'function') return;
    if (send({ ...run.config, rewardFunction: source })) state.setRunRewardFunction(run.id, source);
  });
}

/** Why Start / Step must wait for the reward function of the run it would train, or null. */
export function startBlockedBy(s: AppState): string | null {
  // Another tab owns the saved runs (tabOwner.ts): training here would write over them.
  if (s.readOnlyTab) return TAB_READ_ONLY;
  const run = s.runs.find((r) => r.id === s.activeRunId);
  return rewardFunctionBlock(run?.config ?? s.config, run ? null : s.pendingRewardFunction, s.rewardCheck);
}
