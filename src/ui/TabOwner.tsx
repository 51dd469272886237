// One tab owns the saved runs (src/store/tabOwner.ts): the read-only tab's "Take over", and the
// browser's answer to the request for persistent storage.
import { storagePersistence } from '../store/notices.ts';
import { takeOver, useStorageAnswer } from '../store/tabOwner.ts';

export function TakeOver() {
  return (
    <>
      {' '}
      <button type="button" className="btn" onClick={takeOver} data-testid="take-over">
        Take over
      </button>
    </>
  );
}

export function StoragePersistence() {
  const persisted = useStorageAnswer((s) => s.persisted);
  if (persisted === null) return null;
  return (
    <span className="small" data-testid="storage-persistence">
      {' '}
      {storagePersistence(persisted)}
    </span>
  );
}
