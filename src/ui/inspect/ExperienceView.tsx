// The inspected iteration by the frameworks' names: OpenRLHF's `Experience` or verl's `DataProto`
// batch, one row per field with its shape at this batch size, what it holds here, and the chosen
// response's row of it. The numbers are the trainer's captured tensors (experienceFields.ts).
import { useId, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { dimSizes, experienceFields, type ExperienceField, fieldRow, type Framework, type IterationTrace, shapeText } from '../../rl/inspect/index.ts';
import { formatNumber, fullNumber } from './format.ts';

const FRAMEWORKS: readonly Framework[] = ['openrlhf', 'verl'];

/** A row as a tensor prints it: integers and masks as they are, floats to 4 significant digits. */
function rowText(field: ExperienceField, values: readonly number[]): string {
  const one = (x: number) => (field.kind === 'float' ? formatNumber(x) : String(x));
  return `[${values.map(one).join(', ')}]`;
}

export function ExperienceView({ trace, row }: { trace: IterationTrace; row: number }) {
  const { t: tr } = useTranslation('inspect');
  const [framework, setFramework] = useState<Framework>('openrlhf');
  const group = useId();
  const fields = useMemo(() => experienceFields(trace, framework), [trace, framework]);
  const sizes = dimSizes(trace);
  const P = sizes.S - sizes.A;
  return (
    <section className="experience" aria-labelledby={`${group}-title`} data-testid="experience-view">
      <h4 id={`${group}-title`}>{tr('experience.heading')}</h4>
      <div className="segmented" role="radiogroup" aria-label={tr('experience.pick')}>
        {FRAMEWORKS.map((f) => (
          <label key={f} className={`btn small${framework === f ? ' selected' : ''}`}>
            <input type="radio" name={group} value={f} checked={framework === f} onChange={() => setFramework(f)} />
            {tr(`experience.framework.${f}`)}
          </label>
        ))}
      </div>
      <p className="muted small">{tr(`experience.intro.${framework}`, { B: sizes.B, P, A: sizes.A, S: sizes.S, n: row + 1 })}</p>
      <div className="experience-wrap">
        <table className="experience-table">
          <caption className="small">{tr('experience.caption', { n: row + 1 })}</caption>
          <thead>
            <tr>
              <th scope="col">{tr('experience.field')}</th>
              <th scope="col">{tr('experience.shape')}</th>
              <th scope="col">{tr('experience.holds')}</th>
              <th scope="col">{tr('experience.row', { n: row + 1 })}</th>
            </tr>
          </thead>
          <tbody>
            {fields.map((f) => {
              const values = fieldRow(f, sizes, row);
              return (
                <tr key={f.name} data-field={f.name}>
                  <th scope="row">
                    <code translate="no">{f.name}</code>
                  </th>
                  <td className="num shape">{shapeText(f, sizes)}</td>
                  <td>{tr(`experience.what.${f.what}`)}</td>
                  <td className="tensor-row" translate="no">
                    {values === null ? (
                      <span className="muted">{tr(`experience.none.${f.what}`)}</span>
                    ) : (
                      <span title={values.map(fullNumber).join(', ')}>{rowText(f, values)}</span>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </section>
  );
}
