// The config the trainer worker holds: sent once per change (a config is immutable, so its identity
// says whether the worker has it), again only to a new worker. With no run active, a settings
// change is handed over PREPARE_DELAY_MS after the user stops changing things, with `prepare`, so
// Start goes straight to the first iteration; the edited reward function of a run in progress goes
// at once (rewardFunctionSync.ts).
import type { StoreApi } from 'zustand';
import type { PpoConfig } from '../rl/config.ts';
import type { AppState } from './appStore.ts';
import { syncRewardFunction } from './rewardFunctionSync.ts';
import type { TrainerConnection } from './trainerConnection.ts';

/** A settings change made before Start is prepared for after the user stops changing things. */
const PREPARE_DELAY_MS = 600;

export class ConfigSync {
  /** The config the current worker was sent last; null for a worker that has none from this page. */
  private sent: PpoConfig | null = null;
  private watching = false;

  constructor(
    private readonly store: StoreApi<AppState>,
    private readonly connection: TrainerConnection,
  ) {}

  /** The worker went: its successor has no config yet. */
  forget(): void {
    this.sent = null;
  }

  /**
   * Hands `config` to the worker unless it holds it already; `quiet`: only to a worker running now,
   * as no user command. False when it could not be sent.
   */
  send(config: PpoConfig, quiet = false): boolean {
    if (config === this.sent && this.connection.current) return true;
    const msg = { type: 'setConfig' as const, config };
    const ok = quiet ? this.connection.quietSend(msg) : this.connection.send(msg);
    if (ok) this.sent = config;
    return ok;
  }

  /** The worker holds `config` already (a state it loaded carried it). */
  held(config: PpoConfig): void {
    if (this.connection.current) this.sent = config;
  }

  /**
   * With no run active, the worker gets the current config and gets the trainer and the SFT
   * baseline evaluation ready (`prepare`). Only to a worker running now: it starts none.
   */
  prepareAhead(): void {
    const s = this.store.getState();
    if (s.activeRunId) return;
    if (this.send(s.config, true)) this.connection.quietSend({ type: 'prepare' });
  }

  /** From now on: settings changes prepare the next run, and a run's edited reward function reaches the worker. */
  watch(): void {
    if (this.watching) return;
    this.watching = true;
    syncRewardFunction(this.store, (config) => this.send(config, true));
    let timer: ReturnType<typeof setTimeout> | null = null;
    this.store.subscribe((state, prev) => {
      if (state.config === prev.config || state.activeRunId) return;
      if (timer) clearTimeout(timer);
      timer = setTimeout(() => {
        timer = null;
        this.prepareAhead();
      }, PREPARE_DELAY_MS);
    });
  }
}
