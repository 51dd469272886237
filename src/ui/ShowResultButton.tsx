// "Show the result": the card's recorded runs (store/presetResults.ts), on the charts at once and on
// any device; a file the page cannot read is named in the notice bar and the page is left as it was.
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { Preset } from '../rl/presets.ts';
import type { RunRecord } from '../store/runs.ts';

export function ShowResultButton({
  preset,
  label,
  className = 'btn small',
  onShown,
}: {
  preset: Preset;
  /** The button's words (default "Show the result"). */
  label?: string;
  className?: string;
  onShown?: (runs: RunRecord[], message: string) => void;
}) {
  const { t } = useTranslation('presets');
  const [opening, setOpening] = useState(false);
  const paired = (preset.arms?.length ?? 0) > 1;
  return (
    <button
      type="button"
      className={className}
      data-testid="preset-show-result"
      disabled={opening}
      title={t(paired ? 'showResultArmsHint' : 'showResultHint')}
      onClick={() => {
        setOpening(true);
        void import('../store/presetResults.ts')
          .then(({ showPresetResult }) => showPresetResult(preset.name))
          .then(({ runs, message }) => onShown?.(runs, message))
          .finally(() => setOpening(false));
      }}
    >
      {label ?? t('showResult')}
    </button>
  );
}
