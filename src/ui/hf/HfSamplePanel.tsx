// "Sample from your model": a prompt, the chat template on or off, greedy or sampled with
// temperature and top-p, max new tokens (defaults from generation_config.json), Generate; then the
// response and its BPE tokens, each with its id and the log-prob it was drawn with.
import { useId } from 'react';
import { useTranslation } from 'react-i18next';
import { maxNewTokensFor, settingProblems, useHf } from '../../store/hfModel.ts';
import type { HfSampleToken } from '../../worker/protocol.ts';
import { visibleToken } from '../../util/visibleToken.ts';

const flows = () => import('../../store/hfFlows.ts').then((m) => m.hfFlows());

/** Each token with its position in the response: the key of its box (tokens repeat; positions do not). */
function positioned(tokens: readonly HfSampleToken[]): { tok: HfSampleToken; position: number }[] {
  return tokens.map((tok, position) => ({ tok, position }));
}

function Tokens() {
  const { t } = useTranslation('notices');
  const sample = useHf((s) => s.sample);
  if (!sample) return null;
  return (
    <div className="hf-sample" data-testid="hf-sample">
      {sample.unknownChars ? (
        <p className="notice warn small" data-testid="hf-unknown-chars">
          {t('hf.unknownChars', { count: sample.unknownChars.length, chars: sample.unknownChars.map((c) => `“${c}”`).join(' ') })}
        </p>
      ) : null}
      <p className="small muted">
        {t(sample.stopped === 'eos' ? 'hf.stoppedEos' : 'hf.stoppedMax', {
          tokens: sample.tokens.length,
          promptTokens: sample.promptIds.length,
          seconds: sample.seconds.toFixed(2),
        })}
      </p>
      <p className="hf-response" data-testid="hf-response">
        {sample.text === '' ? <span className="muted">{t('hf.emptyResponse')}</span> : sample.text}
      </p>
      <ol className="hf-tokens" aria-label={t('hf.tokensLabel')} data-testid="hf-tokens">
        {positioned(sample.tokens).map(({ tok, position }) => (
          <li key={position} className={tok.special ? 'special' : undefined}>
            <span className="hf-token-text">{visibleToken(tok.text)}</span>
            <span className="hf-token-id">{tok.id}</span>
            <span className="hf-token-lp">{sample.greedy ? '' : tok.logprob.toFixed(2)}</span>
          </li>
        ))}
      </ol>
      <p className="small muted">{t('hf.tokensHelp')}</p>
    </div>
  );
}

export function HfSamplePanel() {
  const { t } = useTranslation('notices');
  const id = useId();
  const model = useHf((s) => s.model)!;
  const s = useHf((st) => st.settings);
  const set = useHf((st) => st.setSettings);
  const generating = useHf((st) => st.generating);
  const sampleProblem = useHf((st) => st.sampleProblem);
  const problems = settingProblems(s, model);
  const problemOf = (f: string) => problems.find((p) => p.field === f);
  const num = (v: string) => (v.trim() === '' ? Number.NaN : Number(v));
  const g = model.generation;
  const field = (name: 'temperature' | 'topP' | 'maxNewTokens', label: string, value: number, step: string, disabled: boolean, max?: number) => {
    const p = problemOf(name);
    return (
      <label className="hf-field">
        <span>{label}</span>
        <input
          type="number"
          step={step}
          min={name === 'maxNewTokens' ? 1 : undefined}
          max={max}
          value={Number.isNaN(value) ? '' : value}
          disabled={disabled}
          aria-invalid={p ? true : undefined}
          aria-describedby={p ? `${id}-${name}` : undefined}
          onChange={(e) => set({ [name]: num(e.target.value) })}
          data-testid={`hf-${name}`}
        />
        {p ? (
          <span className="field-problem small" id={`${id}-${name}`}>
            {t('hf.outOfRange', { field: label, range: p.range })}
          </span>
        ) : null}
      </label>
    );
  };
  return (
    <section className="hf-sampler" aria-labelledby={`${id}-title`} data-testid="hf-sampler">
      <h4 id={`${id}-title`}>{t('hf.sampleTitle')}</h4>
      <p className="small muted">{t('hf.defaultsFrom', { source: g.source })}</p>
      <label className="hf-prompt">
        <span>{t('hf.prompt')}</span>
        <textarea rows={3} value={s.prompt} onChange={(e) => set({ prompt: e.target.value })} data-testid="hf-prompt" />
      </label>
      <div className="hf-knobs">
        <label className="hf-check">
          <input
            type="checkbox"
            checked={s.chat && model.hasChatTemplate}
            disabled={!model.hasChatTemplate}
            onChange={(e) => set({ chat: e.target.checked })}
            data-testid="hf-chat"
          />
          <span>{model.hasChatTemplate ? t('hf.chat') : t('hf.noChatTemplate')}</span>
        </label>
        <label className="hf-check">
          <input type="checkbox" checked={s.greedy} onChange={(e) => set({ greedy: e.target.checked })} data-testid="hf-greedy" />
          <span>{t('hf.greedy')}</span>
        </label>
        {field('temperature', t('hf.temperature'), s.temperature, '0.05', s.greedy)}
        {field('topP', t('hf.topP'), s.topP, '0.05', s.greedy)}
        {field('maxNewTokens', t('hf.maxNewTokens'), s.maxNewTokens, '1', false, maxNewTokensFor(model))}
      </div>
      <div className="buttons">
        <button
          type="button"
          className="btn primary small"
          disabled={generating || problems.length > 0}
          onClick={() => void flows().then((f) => f.generate())}
          data-testid="hf-generate"
        >
          {generating ? t('hf.generating') : t('hf.generate')}
        </button>
        {problemOf('prompt') ? <span className="small muted">{t('hf.writePrompt')}</span> : null}
      </div>
      {sampleProblem ? (
        <p className="notice error" role="alert" data-testid="hf-sample-problem">
          {t('hf.sampleRefused', { problem: sampleProblem })}
        </p>
      ) : null}
      <Tokens />
    </section>
  );
}
