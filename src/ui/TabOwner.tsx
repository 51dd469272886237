// One tab owns the saved runs (src/store/tabOwner.ts): the read-only tab's "Take over", and the
// browser's answer to the request for persistent storage.
import { useTranslation } from 'react-i18next';
import { storagePersistence } from '../store/notices.ts';
import { takeOver, useStorageAnswer } from '../store/tabOwner.ts';

export function TakeOver() {
  const { t } = useTranslation('notices');
  return (
    <>
      {' '}
      <button type="button" className="btn" onClick={takeOver} data-testid="take-over">
        {t('takeOver')}
      </button>
    </>
  );
}

export function StoragePersistence() {
  useTranslation('notices'); // the sentence follows a language switch
  const persisted = useStorageAnswer((s) => s.persisted);
  if (persisted === null) return null;
  return (
    <span className="small" data-testid="storage-persistence">
      {' '}
      {storagePersistence(persisted)}
    </span>
  );
}
