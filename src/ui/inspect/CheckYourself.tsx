// "Check yourself": questions on the inspected iteration (rl/inspect/questions.ts), one at a time.
// A number is typed and judged against the iteration's own number within ANSWER_TOLERANCE; the
// clip question asks, for a few tokens of one update step, whether the clip stopped each and on
// which side. Once answered, the walk-through step's formula and its worked numbers are shown.
// A teacher saves the run with the questions on screen; a student who opens that file gets them.
import { useId, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import {
  ANSWER_TOLERANCE,
  type ClipQuestion,
  type ClipSide,
  clipChoices,
  formulaStep,
  type IterationTrace,
  isRight,
  type NumberQuestion,
  parseAnswer,
  type Question,
  questionsFor,
  type RecomputedTrace,
} from '../../rl/inspect/index.ts';
import { formatNumber } from '../../i18n/index.ts';
import { FittedFormula, Formula } from '../math/Formula.tsx';
import { useApp } from '../../store/appStore.ts';
import { chooseClassQuestions, saveRunFile, useClassQuestions } from '../../store/runFiles.ts';
import { localiseTex } from './text.ts';

/** What the student answered: a typed number, or a side per listed token. */
type Answer = { typed: string; value: number } | { sides: ClipSide[] };

const fixed4 = (x: number) => formatNumber(x, { minimumFractionDigits: 4, maximumFractionDigits: 4 });
const texValue = (x: number) => (x < 0 ? `-${Math.abs(x)}` : String(x));

export function CheckYourself({ runId, trace, rec, tokenText }: { runId: string; trace: IterationTrace; rec: RecomputedTrace; tokenText: readonly string[] }) {
  const { t: tr } = useTranslation('inspect');
  const classDraw = useClassQuestions((s) => s.byRun[runId]?.find((q) => q.iter === trace.iter)?.draw ?? null);
  const [draw, setDraw] = useState(classDraw ?? 0);
  // Said to whoever opened the teacher's file, not to the teacher who chose them.
  const run = useApp((s) => s.runs.find((r) => r.id === runId) ?? null);
  const fromFile = run?.recorded !== undefined;
  const questions = useMemo(() => questionsFor(trace, rec, trace.iter * 7919 + draw), [trace, rec, draw]);
  const [at, setAt] = useState(0);
  const [answers, setAnswers] = useState<Record<number, Answer>>({});
  const right = questions.filter((q, i) => answers[i] !== undefined && judged(q, answers[i]).right).length;
  const answered = Object.keys(answers).length;
  if (questions.length === 0)
    return (
      <p className="muted small" data-testid="check-none">
        {tr('check.none')}
      </p>
    );
  const q = questions[Math.min(at, questions.length - 1)];
  return (
    <section className="check-yourself" aria-labelledby="check-title" data-testid="check-yourself">
      <div className="check-head">
        <h4 id="check-title">{tr('check.title')}</h4>
        <span className="muted small" data-testid="check-score">
          {tr('check.score', { right, answered, total: questions.length })}
        </span>
      </div>
      <p className="muted small">{tr('check.intro', { abs: ANSWER_TOLERANCE.abs, rel: ANSWER_TOLERANCE.rel * 100 })}</p>
      {fromFile && classDraw === draw ? (
        <p className="notice info small" data-testid="check-class">
          {tr('check.classSet')}
        </p>
      ) : null}
      <div className="check-nav">
        <button type="button" className="btn small" disabled={at === 0} onClick={() => setAt(at - 1)}>
          {tr('walk.prev')}
        </button>
        <span className="small" aria-live="polite">
          {tr('check.questionOf', { n: at + 1, total: questions.length })}
        </span>
        <button type="button" className="btn small" disabled={at >= questions.length - 1} onClick={() => setAt(at + 1)}>
          {tr('walk.next')}
        </button>
        <button
          type="button"
          className="btn ghost small"
          onClick={() => {
            setDraw((d) => d + 1);
            setAt(0);
            setAnswers({});
          }}
        >
          {tr('check.newQuestions')}
        </button>
        <button
          type="button"
          className="btn ghost small"
          title={tr('check.saveForClassHint')}
          data-testid="check-save-class"
          // A trace whose run was deleted has nothing to save it with.
          disabled={run === null}
          onClick={() => {
            chooseClassQuestions(runId, trace.iter, draw);
            void saveRunFile(runId);
          }}
        >
          {tr('check.saveForClass')}
        </button>
      </div>
      <QuestionCard key={`${draw}:${at}`} q={q} trace={trace} rec={rec} tokenText={tokenText} answer={answers[at]} onAnswer={(a) => setAnswers((all) => ({ ...all, [at]: a }))} />
    </section>
  );
}

/** Whether an answer is right, and for a clip question which tokens were. */
function judged(q: Question, a: Answer): { right: boolean; tokens?: boolean[] } {
  if (q.kind === 'clip') {
    const tokens = q.tokens.map((x, i) => 'sides' in a && a.sides[i] === x.side);
    return { right: tokens.every(Boolean), tokens };
  }
  return { right: 'value' in a && isRight(a.value, q.answer) };
}

function QuestionCard(props: {
  q: Question;
  trace: IterationTrace;
  rec: RecomputedTrace;
  tokenText: readonly string[];
  answer: Answer | undefined;
  onAnswer: (a: Answer) => void;
}) {
  const { t: tr } = useTranslation('inspect');
  const { q, trace, rec, tokenText, answer } = props;
  const token = (t: number) => tokenText[q.row * trace.A + t] ?? '';
  const ctx = { trace, rec, row: q.row, t: q.t, tokenText, update: q.kind === 'clip' ? q.update : 0 };
  const step = formulaStep(q.step);
  return (
    <div className="check-card" data-testid="check-question" data-kind={q.kind}>
      {q.kind === 'clip' ? (
        <ClipAsk q={q} token={token} answer={answer} onAnswer={props.onAnswer} />
      ) : (
        <NumberAsk q={q} token={token(q.t)} estimator={q.kind === 'kl' ? trace.knobs.klEstimator : trace.knobs.advantageEstimator} answer={answer} onAnswer={props.onAnswer} />
      )}
      {answer !== undefined ? (
        <div className="check-worked" data-testid="check-worked">
          <p className="small">
            <strong>{tr('walk.formula')}</strong>
          </p>
          <FittedFormula tex={localiseTex(step.template(rec.knobs))} />
          <p className="small">
            <strong>{tr('walk.withNumbers', { t: q.t })}</strong>
          </p>
          <FittedFormula tex={safe(() => localiseTex(step.substitute(ctx)))} />
        </div>
      ) : null}
    </div>
  );
}

function safe(f: () => string): string {
  try {
    return f();
  } catch (e) {
    return `\\text{${String((e as Error).message).replace(/[\\{}_%&#$^~]/g, ' ')}}`;
  }
}

function NumberAsk({ q, token, estimator, answer, onAnswer }: { q: NumberQuestion; token: string; estimator: string; answer: Answer | undefined; onAnswer: (a: Answer) => void }) {
  const { t: tr } = useTranslation('inspect');
  const id = useId();
  const [typed, setTyped] = useState(answer && 'typed' in answer ? answer.typed : '');
  const [problem, setProblem] = useState<string | null>(null);
  const submit = () => {
    const value = parseAnswer(typed);
    if (value === null) {
      setProblem(tr('check.notANumber', { typed }));
      return;
    }
    setProblem(null);
    onAnswer({ typed, value });
  };
  const verdict = answer && 'value' in answer ? isRight(answer.value, q.answer) : null;
  return (
    <>
      <p className="check-question-text">{tr(`check.ask.${q.kind}`, { n: q.row + 1, t: q.t, token, estimator })}</p>
      <p className="check-given" data-testid="check-given" data-given={JSON.stringify(q.given.map((g) => [g.tex, g.value]))}>
        <FittedFormula tex={q.given.map((g) => `${g.tex} = ${texValue(g.value)}`).join(',\\quad ')} />
      </p>
      <form
        className="check-answer"
        onSubmit={(e) => {
          e.preventDefault();
          submit();
        }}
      >
        <label htmlFor={id}>
          <Formula tex={q.asked} label={tr('check.answerLabel')} /> =
        </label>
        <input
          id={id}
          type="text"
          inputMode="decimal"
          autoComplete="off"
          spellCheck={false}
          value={typed}
          aria-invalid={problem !== null}
          aria-describedby={problem ? `${id}-problem` : undefined}
          onChange={(e) => setTyped(e.target.value)}
          data-testid="check-input"
        />
        <button type="submit" className="btn small primary">
          {tr('check.check')}
        </button>
      </form>
      {problem ? (
        <p className="field-error small" id={`${id}-problem`} role="alert">
          {problem}
        </p>
      ) : null}
      {verdict !== null && answer && 'value' in answer ? (
        <p className={`check-verdict ${verdict ? 'right' : 'wrong'}`} role="status" data-testid="check-verdict">
          {tr(verdict ? 'check.right' : 'check.wrong', { typed: answer.typed, answer: fixed4(q.answer) })}{' '}
          <span className="muted">{tr(q.source === 'trainer' ? 'check.fromTrainer' : 'check.fromRecomputation')}</span>
        </p>
      ) : null}
    </>
  );
}

function ClipAsk({ q, token, answer, onAnswer }: { q: ClipQuestion; token: (t: number) => string; answer: Answer | undefined; onAnswer: (a: Answer) => void }) {
  const { t: tr } = useTranslation('inspect');
  const [sides, setSides] = useState<(ClipSide | '')[]>(() => (answer && 'sides' in answer ? answer.sides : q.tokens.map(() => '')));
  const result = answer ? judged(q, answer) : null;
  const bounds = `\\epsilon_{\\text{low}} = ${q.clipLow},\\quad \\epsilon_{\\text{high}} = ${q.clipHigh}${q.dualClip === null ? '' : `,\\quad c = ${q.dualClip}`}`;
  const complete = sides.every((s) => s !== '');
  return (
    <>
      <p className="check-question-text">{tr('check.ask.clip', { n: q.row + 1, epoch: q.epoch + 1, minibatch: q.minibatch + 1 })}</p>
      <p className="check-given" data-testid="check-given" data-given={JSON.stringify([q.clipLow, q.clipHigh, q.dualClip])}>
        <FittedFormula tex={bounds} />
      </p>
      <table className="check-clip-table">
        <thead>
          <tr>
            <th scope="col">{tr('check.clipToken')}</th>
            <th scope="col">
              <Formula tex="\rho_t" />
            </th>
            <th scope="col">
              <Formula tex="\hat A_t" />
            </th>
            <th scope="col">{tr('check.clipSide')}</th>
          </tr>
        </thead>
        <tbody>
          {q.tokens.map((x, i) => (
            <tr key={x.t} data-testid="check-clip-row">
              <th scope="row">
                {x.t} <span className="muted">“{token(x.t)}”</span>
              </th>
              <td className="num">{fixed4(x.ratio)}</td>
              <td className="num">{fixed4(x.advantage)}</td>
              <td>
                <select
                  aria-label={tr('check.clipSideOf', { t: x.t })}
                  value={sides[i]}
                  onChange={(e) => setSides((all) => all.map((s, j) => (j === i ? (e.target.value as ClipSide) : s)))}
                >
                  <option value="" disabled>
                    {tr('check.choose')}
                  </option>
                  {clipChoices(q).map((c) => (
                    <option key={c} value={c}>
                      {tr(`check.side.${c}`)}
                    </option>
                  ))}
                </select>
                {result?.tokens ? (
                  <span className={`check-mark ${result.tokens[i] ? 'right' : 'wrong'}`} data-testid="check-clip-mark">
                    {result.tokens[i] ? ' ✓' : ` ✗ ${tr(`check.side.${x.side}`)}`}
                  </span>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <div className="check-answer">
        <button type="button" className="btn small primary" disabled={!complete} onClick={() => onAnswer({ sides: sides as ClipSide[] })}>
          {tr('check.check')}
        </button>
      </div>
      {result ? (
        <p className={`check-verdict ${result.right ? 'right' : 'wrong'}`} role="status" data-testid="check-verdict">
          {tr(result.right ? 'check.clipRight' : 'check.clipWrong', { right: result.tokens!.filter(Boolean).length, total: q.tokens.length })}
        </p>
      ) : null}
    </>
  );
}
