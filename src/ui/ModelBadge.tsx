// The header's line on the model that trains: its size and where it comes from, always shown, so a
// model knob that does not apply is never silent.
import { useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import { useApp } from '../store/appStore.ts';
import { actorLabel, SHIPPED_DIMS, type ActorModel } from '../store/modelSize.ts';
import { useSft } from '../store/sftState.ts';

/** The model the next Start trains for the current task (the page's SFT model, else the shipped one). */
export function useActorModel(): ActorModel {
  const task = useApp((s) => s.config.task);
  const kept = useSft((s) => s.models[task]);
  // One object per model, so memoised views (the export preview) recompute only when it changes.
  return useMemo(() => (kept ? { origin: kept.origin, dims: kept.dims } : { origin: 'shipped', dims: SHIPPED_DIMS }), [kept]);
}

export function ModelBadge() {
  const actor = useActorModel();
  const { t } = useTranslation('settings');
  return (
    <span className="model-badge" data-testid="model-size" title={t('model.badgeTitle')}>
      {actorLabel(actor)}
    </span>
  );
}
