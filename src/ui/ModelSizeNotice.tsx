// Before Start, beside it: when Layers / Heads / Width differ from the model that would train, say
// so and offer both ways out: train an SFT model of the knobs' size (with a measured estimate of
// how long) or go back to the shipped model. While SFT runs, say why Start waits.
import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { useApp } from '../store/appStore.ts';
import { formatDims, formatSeconds, mismatchMessage, SHIPPED_DIMS, sftSecondsEstimate } from '../store/modelSize.ts';
import { timingKey, useSft } from '../store/sftState.ts';
import { useActorModel } from './ModelBadge.tsx';

const flows = () => import('../store/sftFlows.ts');

export function ModelSizeNotice() {
  const config = useApp((s) => s.config);
  const running = useApp((s) => s.runState === 'running');
  const actor = useActorModel();
  // Re-renders on a language switch: the mismatch sentence is worded by modelSize.ts.
  const { t } = useTranslation('settings');
  const sftRunning = useSft((s) => s.run?.status === 'running');
  const message = mismatchMessage(config, actor);
  const dims = { nLayer: config.nLayer, nHead: config.nHead, dModel: config.dModel };
  const timing = useSft((s) => s.timings[timingKey(config.task, dims)]);
  const timed = timing !== undefined;
  useEffect(() => {
    // One short timing per task and size, after the knobs settle; asked again while no worker answers.
    if (!message || sftRunning || timed) return;
    const ask = () => void flows().then((f) => f.measureSftStep());
    const first = setTimeout(ask, 800);
    const again = setInterval(ask, 5_000);
    return () => {
      clearTimeout(first);
      clearInterval(again);
    };
  }, [message, sftRunning, timed]);
  if (sftRunning) {
    return (
      <p className="notice info model-size-notice" role="status" data-testid="sft-busy">
        {t('model.sftBusy', { dims: formatDims(dims) })}
      </p>
    );
  }
  if (!message) return null;
  const about = timing === undefined ? t('model.timing') : t('model.about', { time: formatSeconds(sftSecondsEstimate(timing.secondsPerStep, timing.recipeSteps)) });
  return (
    <div className="notice warn model-size-notice" role="status" data-testid="model-mismatch">
      <span>{message}</span>
      <span className="buttons">
        <button type="button" className="btn small" disabled={running} onClick={() => void flows().then((f) => f.trainSftModel(f.sftPhaseStepCap()))} data-testid="offer-sft">
          {t('model.offerSft', { about })}
        </button>
        <button type="button" className="btn small" disabled={running} onClick={() => void flows().then((f) => f.switchToShippedModel())} data-testid="offer-shipped">
          {t('model.offerShipped', { dims: formatDims(SHIPPED_DIMS) })}
        </button>
      </span>
    </div>
  );
}
