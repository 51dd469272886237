// Human feedback: the pairs a person labelled in the "Human feedback" view, and the state of
// training the reward model on them. Kept apart from the main store: it changes on clicks, not
// on trainer messages.
import { create } from 'zustand';
import type { LabelledPair, WorkerToPage } from '../worker/protocol.ts';
import { pairKey } from './feedbackPairs.ts';
import { trainer } from './trainerClient.ts';

export type RewardTrainResult = Omit<Extract<WorkerToPage, { type: 'rewardModelTrained' }>, 'type'>;

export interface FeedbackState {
  labels: LabelledPair[];
  /** Keys of pairs already labelled or skipped: they are not offered again. */
  seen: ReadonlySet<string>;
  training: boolean;
  result: RewardTrainResult | null;
  /** Records that `chosen` was preferred over `rejected`. */
  label(pair: LabelledPair): void;
  skip(prompt: string, a: string, b: string): void;
  remove(index: number): void;
  clear(): void;
  /** Sends every label to the worker; resolves when it answered (or failed, with a notice). */
  train(): Promise<void>;
}

export const useFeedback = create<FeedbackState>()((set, get) => ({
  labels: [],
  seen: new Set(),
  training: false,
  result: null,
  label(pair) {
    const key = pairKey(pair.prompt, pair.chosen, pair.rejected);
    if (pair.chosen === pair.rejected || get().seen.has(key)) return;
    set({ labels: [...get().labels, pair], seen: new Set(get().seen).add(key) });
  },
  skip(prompt, a, b) {
    set({ seen: new Set(get().seen).add(pairKey(prompt, a, b)) });
  },
  remove(index) {
    const p = get().labels[index];
    if (!p) return;
    const seen = new Set(get().seen);
    seen.delete(pairKey(p.prompt, p.chosen, p.rejected));
    set({ labels: get().labels.filter((_, i) => i !== index), seen });
  },
  clear: () => set({ labels: [], seen: new Set(), result: null }),
  async train() {
    const { labels, training } = get();
    if (training || labels.length === 0) return;
    set({ training: true });
    try {
      const reply = await trainer.models.trainRewardModel(labels.map((p) => ({ ...p })));
      if (reply) set({ result: { pairs: reply.pairs, accuracy: reply.accuracy, accuracyBefore: reply.accuracyBefore } });
    } finally {
      set({ training: false });
    }
  },
}));
