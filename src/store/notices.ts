// Every sentence the store shows in the page's notice bar (the trainer's, saved runs', checkpoint
// files'), as pure functions from a message or state to its text: one place to read them together,
// and to translate them. Each is made in the language of the moment it is raised (a notice is
// stored as text); the namespace is bundled, so `t` answers synchronously.
import { currentLocale, i18n, t } from '../i18n/index.ts';
import { findPreset } from '../rl/presets.ts';
import { adviceNumber, type KnobAdvice } from '../worker/nanAdvice.ts';
import { type NonFiniteReport, type PageToWorker, type RewardFunctionReport, type TrainerStage, USER_PAUSE_REASON, type WorkerToPage } from '../worker/protocol.ts';
import type { RunSequence } from './statusTypes.ts';
import { formatBytes } from '../model/hf/memoryPlan.ts';
import { RunFileError } from './fileChecks.ts';
import { RUN_FILE_MAX_BYTES, RUN_FILE_VERSION } from './runFile.ts';

type Msg<T extends WorkerToPage['type']> = Extract<WorkerToPage, { type: T }>;

/**
 * Why nothing trains when the worker could not start, and the second tab's one line (tabOwner.ts:
 * why Start is held and what frees it). Modules read them as reasons (trainerConnection.ts,
 * rewardFunctionSync.ts), so they stay constants: live bindings that follow the page's language.
 */
export let TRAINER_MISSING = t('notices:trainerMissing');
export let TAB_READ_ONLY = t('notices:tabReadOnly');
function retranslateConstants(): void {
  TRAINER_MISSING = t('notices:trainerMissing');
  TAB_READ_ONLY = t('notices:tabReadOnly');
}
i18n.on('languageChanged', retranslateConstants);
i18n.on('loaded', retranslateConstants);

/** A command's name as words: trainRewardModel → "Train reward model" (in the page's language). */
export function commandLabel(type: PageToWorker['type']): string {
  const words = type.replace(/[A-Z]/g, (c) => ` ${c.toLowerCase()}`);
  return t(`notices:command.${type}`, { defaultValue: words.charAt(0).toUpperCase() + words.slice(1) });
}

/** A trainer stage as words ("rollout", "update"). */
function stageLabel(stage: TrainerStage): string {
  return t(`notices:stage.${stage}`, { defaultValue: stage });
}

/** Items said as one list: "A and B" in English. */
function joined(items: readonly string[], key: 'armsJoin' | 'problemsJoin'): string {
  return items.join(t(`notices:${key}`));
}

export function trainerMissing(type: PageToWorker['type']): string {
  return t('notices:commandRequested', { command: commandLabel(type), reason: TRAINER_MISSING });
}

export function sendFailed(type: PageToWorker['type'], message: string): string {
  return t('notices:sendFailed', { command: commandLabel(type), message });
}

export function requestTimedOut(type: PageToWorker['type'], seconds: number): string {
  return t('notices:requestTimedOut', { command: commandLabel(type), seconds });
}

/** A request whose reply cannot come any more (the worker was replaced, or the run reset). */
export function requestLost(type: PageToWorker['type'], message: string): string {
  return t('notices:requestLost', { command: commandLabel(type), message });
}

export function stateNotSaved(problem: { label: string; message: string }): string {
  return t('notices:stateNotSaved', { label: problem.label, message: problem.message });
}

export function deviceLost(msg: Msg<'deviceLost'>): string {
  if (msg.iter === null) return t('notices:deviceLost', { reason: msg.reason });
  if (!msg.stage) return t('notices:deviceLostAfter', { reason: msg.reason, count: msg.iter });
  return t('notices:deviceLostDuring', { reason: msg.reason, count: msg.iter, stage: stageLabel(msg.stage) });
}

export function deviceRecovered(msg: Msg<'deviceRecovered'>): string {
  const replay = msg.lostAt === null ? '' : t('notices:deviceReplayed', { count: msg.replayed, lostAt: msg.lostAt, fromIter: msg.fromIter });
  return `${t('notices:deviceRecovered', { adapter: msg.adapter })}${replay}${msg.resumed ? '' : t('notices:pressStart')}`;
}

export function deviceUnavailable(msg: Msg<'deviceUnavailable'>): string {
  return t('notices:deviceUnavailable', { message: msg.message });
}

/**
 * The knob advice (nanAdvice.ts) as a clause: the knob, its value against the default, and what
 * to try. The English is the worker's adviceText word for word.
 */
export function knobAdviceText(a: KnobAdvice): string {
  const values = {
    label: t(`notices:knob.${a.field}`, { defaultValue: a.label }),
    field: a.field,
    value: a.value,
    defaultValue: a.defaultValue,
    suggested: adviceNumber(a.suggested),
  };
  return a.excess > 1 && Number.isFinite(a.excess) ? t('notices:adviceAbove', { ...values, times: adviceNumber(a.excess) }) : t('notices:adviceAtDefault', values);
}

export function nonFinitePaused(n: NonFiniteReport): string {
  return t('notices:nonFinitePaused', { iter: n.iter, quantity: n.quantity, value: n.value, stage: stageLabel(n.stage), advice: knobAdviceText(n.advice) });
}

/** The written reward function refused a sample: where, and that nothing was applied or lost. */
export function rewardFunctionPaused(r: RewardFunctionReport): string {
  return t('notices:rewardFunctionPaused', { iter: r.iter, message: r.message });
}

/** The worker's pause, with its reason: the user's own Pause is said in the page's words. */
export function paused(reason: string): string {
  return reason === USER_PAUSE_REASON ? t('notices:pausedByUser') : t('notices:paused', { reason });
}

export function trainerError(message: string, stage?: TrainerStage): string {
  return stage ? t('notices:trainerErrorDuring', { stage: stageLabel(stage), message }) : t('notices:trainerError', { message });
}

/**
 * A preset's name in the page's language, from its English name (a preset's identity in the store
 * and in saved runs); a name no preset has is shown as it is.
 */
export function presetTitle(name: string): string {
  const preset = findPreset(name);
  return preset ? t(`presets:preset.${preset.id}.name`) : name;
}

/** The button that trains a preset's `arms` arms one after the other, as the preset card names it. */
export function runArmsLabel(arms: number): string {
  return arms === 2 ? t('presets:runBoth') : t('presets:runAll', { n: arms });
}

/** A "Run both" stopped mid-arm by an error: which arm, how far it got, and what Start and Reset do. */
export function sequenceStopped(seq: RunSequence, done: number, error: string): string {
  const arm = seq.arms[seq.index];
  return t('notices:sequenceStopped', {
    preset: presetTitle(seq.preset),
    runArms: runArmsLabel(seq.arms.length),
    arm: seq.index + 1,
    arms: seq.arms.length,
    label: arm?.label ?? '?',
    done,
    budget: seq.budget,
    error,
  });
}

export function sequenceDone(seq: RunSequence): string {
  return t('notices:sequenceDone', {
    preset: presetTitle(seq.preset),
    arms: joined(
      seq.arms.map((a) => a.label),
      'armsJoin',
    ),
    budget: seq.budget,
  });
}

export function budgetReached(budget: number | undefined): string {
  return t('notices:budgetReached', { budget: budget ?? '?' });
}

export function noPreset(name: string): string {
  return t('notices:noPreset', { name });
}

export function presetNotStarted(name: string, problems: string[]): string {
  return t('notices:presetNotStarted', { name: presetTitle(name), problems: joined(problems, 'problemsJoin') });
}

/** What a resume names: the run and the iteration it goes on from. */
export function resumeTarget(runName: string, iter: number): string {
  return t('notices:resumeTarget', { run: runName, iter });
}

export function resumeFailed(what: string, problem: { label: string; message: string }): string {
  return t('notices:resumeFailed', { what, label: problem.label, message: problem.message });
}

export function resumed(what: string): string {
  return t('notices:resumed', { what });
}

export function sequenceAllTrained(seq: RunSequence): string {
  return t('notices:sequenceAllTrained', { preset: presetTitle(seq.preset), budget: seq.budget });
}

/** The arm in progress could not resume after a reload (`why`) and trains again from the start. */
export function sequenceRetrains(seq: RunSequence, why: string): string {
  return t('notices:sequenceRetrains', { why, runArms: runArmsLabel(seq.arms.length), label: seq.arms[seq.index]?.label ?? '?' });
}

export function cpuWithoutState(workerIter: number | null | undefined): string {
  return workerIter != null ? t('notices:cpuWithoutStateAt', { iter: workerIter }) : t('notices:cpuWithoutState');
}

export function stateUnreadable(problem: { label: string; message: string }): string {
  return t('notices:stateUnreadable', { label: problem.label, message: problem.message });
}

export function runsNotRestored(e: unknown): string {
  return t('notices:runsNotRestored', { error: String(e) });
}

export function runsNotSaved(e: unknown): string {
  return t('notices:runsNotSaved', { error: String(e) });
}

export function batchesNotSaved(e: unknown): string {
  return t('notices:batchesNotSaved', { error: String(e) });
}

export function batchesNotRestored(e: unknown): string {
  return t('notices:batchesNotRestored', { error: String(e) });
}

export function sequenceNotRestored(problem: string): string {
  return t('notices:sequenceNotRestored', { problem });
}

export function actorExported(fileName: string, byteLength: number): string {
  return t('notices:actorExported', { fileName, kib: (byteLength / 1024).toFixed(0), format: 'safetensors' });
}

export function checkpointRefused(fileName: string, problem: string): string {
  return t('notices:checkpointRefused', { fileName, problem });
}

export function runFileSaved(name: string, fileName: string, bytes: number, iterations: number, traces: number, stateIter: number | null = null): string {
  const said = t('notices:runFileSaved', { name, fileName, size: formatBytes(bytes), iterations, traces });
  return stateIter === null ? said : sentences([said, t('notices:runFileWithState', { iter: stateIter })]);
}

export function runFileOpened(name: string, fileName: string, iterations: number, savedAt: string, stateIter: number | null = null): string {
  const said = t('notices:runFileOpened', { name, fileName, iterations, date: new Date(savedAt).toLocaleString(currentLocale()) });
  return sentences([said, stateIter === null ? t('notices:runFileNotTrained') : t('notices:runFileCanContinue', { iter: stateIter })]);
}

/** The card's recorded runs are on the charts ("Show the result"): which preset, which arms, how long, when. */
export function presetResultOpened(presetId: string, armNames: readonly string[], iterations: number, savedAt: string, seed: number): string {
  const preset = t(`presets:preset.${presetId}.name`);
  const date = new Date(savedAt).toLocaleDateString(currentLocale());
  return armNames.length > 1
    ? t('notices:presetResultOpenedArms', { preset, arms: joined(armNames, 'armsJoin'), iterations, date, seed })
    : t('notices:presetResultOpened', { preset, iterations, date, seed });
}

export function runFileNotContinued(name: string, e: unknown): string {
  return t('notices:runFileNotContinued', { name, why: e instanceof Error ? e.message : String(e) });
}

/** Why a run file was refused, in the page's language (`versions`, `maxBytes`: the versions and size the reader takes). */
function runFileWhy(e: unknown, versions: readonly number[], maxBytes: number): string {
  if (!(e instanceof RunFileError)) return e instanceof Error ? e.message : String(e);
  const want = new Intl.ListFormat(currentLocale(), { type: 'disjunction' }).format(versions.map(String));
  return t(`notices:runFileWhy.${e.reason}`, { found: e.found, want, field: e.field, detail: e.message, mib: maxBytes / 2 ** 20 });
}

/** Why a run file was not opened, in the page's language; the page is untouched. */
export function runFileRefused(fileName: string, e: unknown): string {
  return t('notices:runFileRefused', { fileName, why: runFileWhy(e, [RUN_FILE_VERSION], RUN_FILE_MAX_BYTES) });
}

/**
 * A run file of the visitor's own model refused (`versions`, `maxBytes`: the versions and size its
 * reader takes, hfRunFile.ts): the model and its adapter stay as they were.
 */
export function hfRunFileRefused(fileName: string, e: unknown, versions: readonly number[], maxBytes: number): string {
  return t('notices:hf.train.runRefused', { fileName, why: runFileWhy(e, versions, maxBytes) });
}

/** A run of a model of your own opened from the charts' Open run… (or the no-WebGPU guide): where it went. */
export function ownModelRunOpened(fileName: string): string {
  return t('notices:ownModelRunOpened', { fileName });
}

export function hfRunFileSaved(fileName: string, bytes: number, iterations: number, withState: boolean): string {
  return t(withState ? 'notices:hf.train.runSaved' : 'notices:hf.train.runSavedNoState', { fileName, size: formatBytes(bytes), iterations });
}

/** A run file's adapter put on the open model: its rows shown, Continue going on from its last iteration. */
export function hfRunFileOpened(fileName: string, savedAt: string, iterations: number): string {
  return t('notices:hf.train.runOpened', { fileName, iterations, date: new Date(savedAt).toLocaleString(currentLocale()) });
}

export function actorLoaded(fileName: string): string {
  return t('notices:actorLoaded', { fileName });
}

export function tabTakenOver(): string {
  return t('notices:tabTakenOver');
}

/** The browser's answer to navigator.storage.persist(), for the page's footer. */
export function storagePersistence(persisted: boolean): string {
  return persisted ? t('notices:storagePersisted') : t('notices:storageNotPersisted');
}

/** Sentences said one after another: a space between them in English, none in Chinese. */
export function sentences(parts: readonly string[]): string {
  return parts.join(currentLocale() === 'zh-CN' ? '' : ' ');
}

/** A QuotaExceededError (or another "storage is full" failure) on an IndexedDB write. */
export function isQuotaError(e: unknown): boolean {
  const name = typeof e === 'object' && e !== null && 'name' in e ? String((e as { name: unknown }).name) : '';
  const message = e instanceof Error ? e.message : String(e);
  return name === 'QuotaExceededError' || /quota/i.test(message);
}

/**
 * Storage is full: what of the run is saved and what is not. `metricsThrough`: iterations whose
 * metrics are in the database (null: none of this run's); `stateAt`: the iteration a saved trainer
 * state resumes from (null: none saved for this run).
 */
export function storageFull(saved: { metricsThrough: number | null; stateAt: number | null; unsavedState: boolean }): string {
  const metrics =
    saved.metricsThrough === null || saved.metricsThrough === 0 ? t('notices:storageFullNoMetrics') : t('notices:storageFullMetricsUpTo', { iter: saved.metricsThrough });
  const state = !saved.unsavedState ? '' : saved.stateAt === null ? t('notices:storageFullNoState') : t('notices:storageFullStateAt', { iter: saved.stateAt });
  return t('notices:storageFull', { metrics, state });
}

export function batchesStorageFull(): string {
  return t('notices:batchesStorageFull');
}
