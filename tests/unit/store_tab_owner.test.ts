// Two tabs, full disks: which tab may write the saved runs (src/store/tabOwner.ts), and the words a
// full disk gets (src/store/notices.ts).
import { describe, expect, it } from 'vitest';
import * as notices from '../../src/store/notices.ts';
import { mayWrite, nextRole } from '../../src/store/tabOwner.ts';
import { updateAdvice } from '../../src/store/appUpdate.ts';

describe('tab ownership', () => {
  it('the first tab owns the runs; a second finds them held and is read-only, waiting its turn', () => {
    expect(nextRole('unclaimed', 'granted')).toEqual({ role: 'owner', reload: false, pause: false, wait: false });
    expect(nextRole('unclaimed', 'busy')).toEqual({ role: 'readonly', reload: false, pause: false, wait: true });
    expect(mayWrite('owner')).toBe(true);
    expect(mayWrite('readonly')).toBe(false);
  });

  it('a read-only tab that gets the lock reads the database back before it writes', () => {
    expect(nextRole('readonly', 'granted')).toEqual({ role: 'owner', reload: true, pause: false, wait: false });
  });

  it('the owner whose lock is taken over pauses training and waits to own the runs again', () => {
    expect(nextRole('owner', 'stolen')).toEqual({ role: 'readonly', reload: false, pause: true, wait: true });
    // Already read-only: nothing to pause.
    expect(nextRole('readonly', 'stolen').pause).toBe(false);
  });

  it('without the Web Locks API every tab writes, as before', () => {
    expect(nextRole('unclaimed', 'unsupported').role).toBe('owner');
    expect(mayWrite('unclaimed')).toBe(true);
  });

  it('the read-only tab says so in one line', () => {
    expect(notices.TAB_READ_ONLY).toBe('Training is open in another tab of this page; this tab is read-only for runs until you close it or take over.');
    expect(notices.TAB_READ_ONLY).not.toContain('\n');
  });
});

describe('a full disk is named with what was and was not saved', () => {
  it('recognises QuotaExceededError by name or message', () => {
    const quota = Object.assign(new Error('The quota has been exceeded.'), { name: 'QuotaExceededError' });
    expect(notices.isQuotaError(quota)).toBe(true);
    expect(notices.isQuotaError({ name: 'QuotaExceededError', message: '' })).toBe(true);
    expect(notices.isQuotaError(new Error('Transaction aborted'))).toBe(false);
  });

  it('the state write failed after the run record was written', () => {
    expect(notices.storageFull({ metricsThrough: 42, stateAt: null, unsavedState: true })).toBe(
      "Storage is full: the run's metrics up to iteration 42 are saved; its trainer state for resume is not. Free space or delete old runs; the charts in this tab are kept.",
    );
  });

  it('an older state is still there to resume from', () => {
    expect(notices.storageFull({ metricsThrough: 50, stateAt: 40, unsavedState: true })).toContain(
      'its newest trainer state for resume is not (a reload resumes from iteration 40)',
    );
  });

  it('the run list write failed: metrics saved so far, or none', () => {
    expect(notices.storageFull({ metricsThrough: 12, stateAt: null, unsavedState: false })).toBe(
      "Storage is full: the run's metrics up to iteration 12 are saved. Free space or delete old runs; the charts in this tab are kept.",
    );
    expect(notices.storageFull({ metricsThrough: null, stateAt: null, unsavedState: false })).toContain("none of the run's metrics are saved");
  });

  it('storage persistence: the answer either way', () => {
    expect(notices.storagePersistence(true)).toContain('will not clear them');
    expect(notices.storagePersistence(false)).toContain('did not grant persistent storage');
  });
});

describe('the update prompt', () => {
  it('reloading never happens by itself; during training the prompt says what Reload costs', () => {
    expect(updateAdvice(true)).toContain('reloading stops it');
    expect(updateAdvice(false)).toContain('saved runs are kept');
  });
});
