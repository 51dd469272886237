// A LoRA run's results as the trainer computed them: the task's held-out accuracy before and after,
// the reward and KL curves, one row of numbers per iteration, and the last iteration's responses
// with each token's ratio, advantage and clip side. Drawn for the run in training and for a run
// file shown as recorded.
import { useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { HfTrainEval, HfTrainResponse, HfTrainRow, HfTrainSettings } from '../../rl/hf/hfTrainSettings.ts';
import type { HfComparedRun } from '../../store/hfTrain.ts';
import { HfTrainCharts } from './HfTrainCharts.tsx';
import { visibleToken } from '../../util/visibleToken.ts';

/** The columns named as verl logs them (src/rl/metricNames.ts's vocabulary). */
const METRIC_COLUMNS = ['reward_mean', 'kl', 'policy_loss', 'clipfrac', 'value_loss'] as const satisfies readonly (keyof HfTrainRow)[];

const fmt = (x: number | null, digits = 3) => (x === null ? '–' : Math.abs(x) >= 1e-3 || x === 0 ? x.toFixed(digits) : x.toExponential(1));

/**
 * The evaluations, charts and table of a run's rows, then its last batch's responses and tokens;
 * `onInspect`, where the inspector holds the last iteration, opens a response there; `comparison`,
 * the earlier runs the charts draw beside this one.
 */
export function HfTrainResults({
  rows,
  evals,
  onInspect,
  settings = null,
  comparison,
  idPrefix,
}: {
  rows: readonly HfTrainRow[];
  evals: readonly HfTrainEval[];
  onInspect?: (iter: number, response: number) => void;
  /** The settings the rows were trained with, where known. */
  settings?: HfTrainSettings | null;
  comparison?: { compared: readonly HfComparedRun[]; onClear: () => void };
  /** Before the charts' ids (HfTrainCharts). */
  idPrefix?: string;
}) {
  const { t } = useTranslation('notices');
  const captionId = useId();
  const last = rows.at(-1);
  return (
    <div data-testid="hf-train-results">
      {evals.map((e) => (
        <p key={e.when} className="small" data-testid={`hf-train-eval-${e.when}`}>
          {e.sampled
            ? t(e.when === 'before' ? 'hf.train.evalBeforeSampled' : 'hf.train.evalAfterSampled', {
                accuracy: (100 * e.greedyAccuracy).toFixed(0),
                sampled: (100 * e.sampled.accuracy).toFixed(0),
                samples: e.sampled.samples,
                count: e.count,
              })
            : t(e.when === 'before' ? 'hf.train.evalBefore' : 'hf.train.evalAfter', { accuracy: (100 * e.greedyAccuracy).toFixed(0), count: e.count })}
        </p>
      ))}
      <HfTrainCharts rows={rows} settings={settings} compared={comparison?.compared} onClearCompared={comparison?.onClear} idPrefix={idPrefix} />
      {rows.length > 0 ? (
        <p className="small muted" id={captionId}>
          {t('hf.train.tableCaption')}
        </p>
      ) : null}
      {rows.length > 0 ? (
        // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must take focus so the keyboard can scroll it (a phone's width)
        <section className="table-scroll" tabIndex={0} aria-labelledby={captionId}>
          <table className="hf-train-table" aria-describedby={`${captionId}`} data-testid="hf-train-table">
            <thead>
              <tr>
                <th scope="col">{t('hf.train.colIter')}</th>
                {METRIC_COLUMNS.map((name) => (
                  <th key={name} scope="col">
                    {name}
                  </th>
                ))}
                <th scope="col">{t('hf.train.colLength')}</th>
                <th scope="col">{t('hf.train.colSeconds')}</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr key={r.iter}>
                  <th scope="row">{r.iter}</th>
                  <td>{fmt(r.reward_mean)}</td>
                  <td>{fmt(r.kl, 4)}</td>
                  <td>{fmt(r.policy_loss, 4)}</td>
                  <td>{fmt(r.clipfrac)}</td>
                  <td>{fmt(r.value_loss, 4)}</td>
                  <td>{r.response_length_mean.toFixed(1)}</td>
                  <td>{r.seconds.toFixed(1)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      ) : null}
      {last && last.responses.length > 0 ? <LastBatch row={last} onInspect={onInspect} /> : null}
    </div>
  );
}

const clippedIn = (r: HfTrainResponse) => r.tokens.filter((x) => x.clip !== null).length;

/**
 * The last iteration's responses, one at a time (a select lists them with their scores and clipped
 * tokens): the chosen one decoded, then its BPE tokens in the last epoch's update.
 */
function LastBatch({ row, onInspect }: { row: HfTrainRow; onInspect?: (iter: number, response: number) => void }) {
  const { t } = useTranslation('notices');
  const id = useId();
  const [chosen, setChosen] = useState(0);
  const at = Math.min(chosen, row.responses.length - 1);
  const r = row.responses[at];
  const clippedResponses = row.responses.filter((x) => clippedIn(x) > 0).length;
  const firstClipped = row.responses.findIndex((x) => clippedIn(x) > 0);
  return (
    <div className="hf-last-batch">
      <div className="buttons">
        <label className="hf-field">
          <span>{t('hf.train.responsePick', { iter: row.iter })}</span>
          <select id={id} value={at} onChange={(e) => setChosen(Number(e.target.value))} data-testid="hf-train-response">
            {row.responses.map((x, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: the batch's order is the response's identity
              <option key={i} value={i}>
                {t('hf.train.responseOption', { n: i + 1, response: x.response, score: fmt(x.score), clipped: clippedIn(x) })}
              </option>
            ))}
          </select>
        </label>
        {firstClipped >= 0 && firstClipped !== at ? (
          <button type="button" className="btn small ghost" onClick={() => setChosen(firstClipped)} data-testid="hf-train-show-clipped">
            {t('hf.train.showClipped')}
          </button>
        ) : null}
        {onInspect ? (
          <button type="button" className="btn small" title={t('hf.train.openInspectTitle')} onClick={() => onInspect(row.iter, at)} data-testid="hf-train-inspect">
            {t('hf.train.openInspect')}
          </button>
        ) : null}
      </div>
      <p className="small muted" data-testid="hf-train-batch-clipped">
        {t('hf.train.batchClipped', { responses: clippedResponses, count: row.responses.length })}
      </p>
      <p className="small hf-train-sample" data-testid="hf-train-sample">
        {t('hf.train.sample', { iter: row.iter, n: at + 1, prompt: r.prompt, score: fmt(r.score) })} <q>{r.response}</q>
      </p>
      {r.tokens.length > 0 ? <UpdateTokens response={r} /> : null}
    </div>
  );
}

/** The inspected response's BPE tokens in the last epoch's update: ratio, advantage, and the side the clip bound. */
function UpdateTokens({ response }: { response: HfTrainResponse }) {
  const { t } = useTranslation('notices');
  const clipped = clippedIn(response);
  return (
    <div data-testid="hf-train-tokens-box">
      <p className="small muted">{t('hf.train.tokensHelp', { clipped, count: response.tokens.length })}</p>
      <ol className="hf-tokens hf-update-tokens" aria-label={t('hf.train.tokensLabel')} data-testid="hf-train-tokens">
        {response.tokens
          .map((x, i) => ({ x, position: i }))
          .map(({ x, position }) => (
            <li key={position} className={x.clip ? `clipped clip-${x.clip}` : undefined} data-clip={x.clip ?? undefined}>
              <span className="hf-token-text">{visibleToken(x.text)}</span>
              <span className="hf-token-id">{x.id}</span>
              <span className="hf-token-lp">r {Math.exp(x.logprob - x.old).toFixed(3)}</span>
              <span className="hf-token-lp">A {x.advantage.toFixed(2)}</span>
              {x.clip ? <span className="hf-token-clip">{t(`hf.train.clip.${x.clip}`)}</span> : null}
            </li>
          ))}
      </ol>
    </div>
  );
}
