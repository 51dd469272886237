// The "Sample" dropdown shared by the per-sample teaching views: one option per sample row of the
// latest iteration, labelled with its reward.
export function SamplePicker({ rewards, index, onChange }: { rewards: readonly number[]; index: number; onChange: (i: number) => void }) {
  return (
    <label>
      Sample
      <select value={index} onChange={(e) => onChange(Number(e.target.value))} aria-label="Sample">
        {rewards.map((reward, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: the option's value is the sample's row index itself; rows are positional, never reordered
          <option key={i} value={i}>
            #{i + 1} — reward {reward.toFixed(2)}
          </option>
        ))}
      </select>
    </label>
  );
}
