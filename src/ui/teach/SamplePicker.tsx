// The "Sample" dropdown shared by the per-sample teaching views: one option per sample row of the
// latest iteration, labelled with its reward.
import { useTranslation } from 'react-i18next';

export function SamplePicker({ rewards, index, onChange }: { rewards: readonly number[]; index: number; onChange: (i: number) => void }) {
  const { t } = useTranslation('teach');
  return (
    <label>
      {t('picker.sample')}
      <select value={index} onChange={(e) => onChange(Number(e.target.value))} aria-label={t('picker.sample')}>
        {rewards.map((reward, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: the option's value is the sample's row index itself; rows are positional, never reordered
          <option key={i} value={i}>
            {t('picker.option', { n: i + 1, reward: reward.toFixed(2) })}
          </option>
        ))}
      </select>
    </label>
  );
}
