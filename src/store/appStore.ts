// The page's store, made of three slices, each its state with the actions that change it, the
// worker's messages included: the settings (slices/configSlice.ts), the runs and their batches
// (slices/runsSlice.ts) and where training stands (slices/statusSlice.ts). Components subscribe to
// what they draw; the trainer client (trainerClient.ts) hands each worker message to its action.
import { create } from 'zustand';
import { configSlice, type ConfigSlice } from './slices/configSlice.ts';
import { runsSlice, type RunsSlice } from './slices/runsSlice.ts';
import { statusSlice, type StatusSlice } from './slices/statusSlice.ts';

export type { ConfigSlice } from './slices/configSlice.ts';
export type { RunStart, RunsSlice } from './slices/runsSlice.ts';
export { shownConfig, shownOwnBatch } from './slices/runsSlice.ts';
export type { StatusSlice } from './slices/statusSlice.ts';
export type { CpuOffer, GpuStatus, Notice, ResumeOffer, RunSequence, RunState, SequenceOffer } from './statusTypes.ts';

export type AppState = ConfigSlice & RunsSlice & StatusSlice;

/** A fresh store: the page has one, `useApp`; tests make their own. */
export const createAppStore = () =>
  create<AppState>()((...a) => ({
    ...configSlice(...a),
    ...runsSlice(...a),
    ...statusSlice(...a),
  }));

export const useApp = createAppStore();
