// Checkpoint fuzzing: a valid safetensors file (a tiny actor, a tiny reward model, a shipped
// checkpoint, or a tiny trainer's saved state) is truncated, bit-flipped or has its header rewritten (dtype, shape, offsets that
// overlap or run past the end, duplicate names, wrong task / alphabet / config, oversized header
// length, non-finite data). Each file goes through every reader the page and the CLI use; a read
// must give a named error or a model that is actually usable, and a refused file must leave the
// model it was loaded into untouched.
import type { Backend } from '../backend/backend.ts';
import { loadCheckpointInto, modelFromCheckpoint, parseCheckpoint, saveCheckpoint } from '../model/checkpoint.ts';
import type { GptConfig } from '../model/config.ts';
import { Gpt } from '../model/gpt.ts';
import type { RewardTrainable } from '../model/sequenceModel.ts';
import { decodeSafetensors } from '../model/safetensors.ts';
import { CharTokenizer } from '../model/tokenizer.ts';
import { DEFAULT_CONFIG, type PpoConfig } from '../rl/config.ts';
import { RewardModel } from '../rl/rewardModel/rewardModel.ts';
import { PpoTrainer } from '../rl/trainer.ts';
import { getTask } from '../tasks/index.ts';
import type { Rng } from '../util/rng.ts';
import { chance, pick, randomNumber, randomString, randomValue, sketch, HOSTILE_STRINGS } from './gen.ts';
import { emptyReport, record, runCase, type TargetReport } from './outcome.ts';

const TASK = 'arithmetic';

export interface CheckpointSeeds {
  /** Valid files the mutations start from. */
  files: Uint8Array[];
  /** A model of the tiny actor's shape, the target of loadCheckpointInto. */
  target: Gpt;
  alphabet: string;
  /**
   * The page's pre-check of a loaded file (src/store/checkpoints.ts checkActorFile). Injected:
   * that module pulls in the Vite-only worker client, so only Vite/vitest can import it.
   */
  pageCheck?: (bytes: Uint8Array, task: string) => string | null;
  /** A tiny trainer after one iteration and its saveState bytes: the trainer-state targets. */
  state?: { trainer: PpoTrainer; file: Uint8Array };
}

/** The smallest PPO run with a critic (GAE) and an adaptive KL controller: every part of a state. */
const TINY_PPO: Partial<PpoConfig> = {
  task: TASK,
  promptsPerBatch: 2,
  samplesPerPrompt: 2,
  maxResponseLength: 4,
  ppoEpochs: 1,
  miniBatches: 1,
  advantageEstimator: 'gae',
  klController: 'adaptive',
  evalEvery: 0,
  seed: 5,
};

const TINY: Omit<GptConfig, 'vocabSize' | 'head'> = { nLayer: 1, nHead: 2, dModel: 32, maxSeq: 16 };

/** Tiny valid checkpoints (an lm actor and a reward model) plus any extra files given. */
export async function checkpointSeeds(be: Backend, extra: Uint8Array[] = []): Promise<CheckpointSeeds> {
  const alphabet = getTask(TASK).alphabet;
  const vocabSize = new CharTokenizer(alphabet).vocabSize;
  const actor = new Gpt(be, { ...TINY, vocabSize, head: 'lm' }, 1);
  const rm = new Gpt(be, { ...TINY, vocabSize, head: 'reward' }, 2);
  // Self-consistent but wrong for its alphabet: fewer token rows than the alphabet needs.
  const narrow = new Gpt(be, { ...TINY, vocabSize: vocabSize - 2, head: 'lm' }, 3);
  const files = [
    await saveCheckpoint(actor, { alphabet, task: TASK }),
    await saveCheckpoint(rm, { alphabet, task: TASK }),
    await saveCheckpoint(narrow, { alphabet, task: TASK }),
    ...extra,
  ];
  rm.dispose();
  narrow.dispose();
  const trainer = await PpoTrainer.create({ be, config: { ...DEFAULT_CONFIG, ...TINY_PPO }, actorCheckpoint: files[0] });
  await trainer.iteration(); // non-zero optimiser moments, a moved β
  return { files, target: actor, alphabet, state: { trainer, file: await trainer.saveState() } };
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** What makes a loaded trainer unusable: non-finite weights in the actor or the critic. */
async function unusableTrainer(t: PpoTrainer): Promise<string | null> {
  const w = await t.readWeights();
  if (!w.actor.every(Number.isFinite)) return 'loaded a trainer state with non-finite actor weights';
  if (w.critic && !w.critic.every(Number.isFinite)) return 'loaded a trainer state with non-finite critic weights';
  return null;
}

interface Split {
  header: Record<string, unknown>;
  data: Uint8Array;
}

function split(bytes: Uint8Array): Split {
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
  return { header: JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n))) as Record<string, unknown>, data: bytes.subarray(8 + n) };
}

function join(headerText: string, data: Uint8Array, lengthOverride?: bigint): Uint8Array {
  const json = new TextEncoder().encode(headerText);
  const out = new Uint8Array(8 + json.length + data.length);
  new DataView(out.buffer).setBigUint64(0, lengthOverride ?? BigInt(json.length), true);
  out.set(json, 8);
  out.set(data, 8 + json.length);
  return out;
}

type Entry = { dtype: unknown; shape: unknown; data_offsets: unknown };

function tensorNames(h: Record<string, unknown>): string[] {
  return Object.keys(h).filter((k) => k !== '__metadata__');
}

/** One structural edit of a parsed header; returns the new file and what was done. */
function mutateHeader(rng: Rng, bytes: Uint8Array): { file: Uint8Array; what: string } {
  const { header, data } = split(bytes);
  const names = tensorNames(header);
  const name = pick(rng, names);
  const e = header[name] as Entry;
  const meta = (header.__metadata__ ?? {}) as Record<string, unknown>;
  const offs = e.data_offsets as [number, number];
  const kind = rng.int(0, 16);
  let what = '';
  let text: string | null = null;
  let lengthOverride: bigint | undefined;
  let body = data;
  switch (kind) {
    case 0:
      e.dtype = pick(rng, ['F16', 'BF16', 'F64', 'I64', 'U8', 'BOOL', 'f32', 'I32', '', 5, null, ['F32']]);
      what = `dtype of ${name} = ${sketch(e.dtype)}`;
      break;
    case 1: {
      const s = [...(e.shape as number[])];
      const edits: (() => unknown)[] = [
        () => [...s, 1],
        () => s.slice(1),
        () => s.map((d) => d * 2),
        () => [...s].reverse(),
        () => [],
        () => s.map(() => -1),
        () => s.map((d) => d + 0.5),
        () => [2 ** 53, 2 ** 53],
        () => [2 ** 31, 2 ** 31, 4],
        () => s.map(String),
        () => randomValue(rng),
      ];
      e.shape = pick(rng, edits)();
      what = `shape of ${name} = ${sketch(e.shape)}`;
      break;
    }
    case 2: {
      const edits: (() => unknown)[] = [
        () => [offs[0], data.length + 4], // past the end
        () => [data.length + 8, data.length + 8 + (offs[1] - offs[0])],
        () => [offs[1], offs[0]], // reversed
        () => [offs[0] + 4, offs[1] + 4], // overlaps the next tensor
        () => [-4, offs[1] - offs[0] - 4],
        () => [offs[0] + 0.5, offs[1] + 0.5],
        () => [2 ** 60, 2 ** 60 + (offs[1] - offs[0])],
        () => [offs[0]],
        () => 'x',
        () => randomValue(rng),
      ];
      e.data_offsets = pick(rng, edits)();
      what = `data_offsets of ${name} = ${sketch(e.data_offsets)}`;
      break;
    }
    case 3: {
      // Two tensors on the same bytes.
      const other = header[pick(rng, names)] as Entry;
      other.data_offsets = [...offs];
      other.shape = e.shape;
      what = `a second tensor shares ${name}'s offsets`;
      break;
    }
    case 4: {
      // The same name twice in the JSON text (JSON.parse keeps the last).
      const json = JSON.stringify(header);
      const dup = `${JSON.stringify(name)}:${JSON.stringify({ dtype: 'F32', shape: [1], data_offsets: [0, 4] })},`;
      text = `{${dup}${json.slice(1)}`;
      what = `duplicate name ${name}`;
      break;
    }
    case 5:
      meta.task = pick(rng, ['sentiment', 'stop', '', 'toString', randomString(rng)]);
      what = `task = ${sketch(meta.task)}`;
      break;
    case 6:
      meta.alphabet = pick(rng, ['', 'abc', `${meta.alphabet as string}x`, String(meta.alphabet).slice(1), '😀😀', String(meta.alphabet) + String(meta.alphabet)]);
      what = `alphabet = ${sketch(meta.alphabet)}`;
      break;
    case 7: {
      const cfg = JSON.parse(String(meta.config)) as Record<string, unknown>;
      const field = pick(rng, ['vocabSize', 'nLayer', 'nHead', 'dModel', 'maxSeq', 'head', 'extra']);
      cfg[field] = chance(rng, 0.5) ? randomNumber(rng) : randomValue(rng);
      if (chance(rng, 0.3)) cfg[field] = typeof cfg[field] === 'number' ? pick(rng, [1, 2, 3, 4, 8, 16, 64, 1e9]) : cfg[field];
      meta.config = JSON.stringify(cfg);
      what = `config.${field} = ${sketch(cfg[field])}`;
      break;
    }
    case 8: {
      const key = pick(rng, ['config', 'alphabet', 'task', 'format_version']);
      if (chance(rng, 0.5)) delete meta[key];
      else meta[key] = chance(rng, 0.5) ? randomValue(rng) : pick(rng, HOSTILE_STRINGS);
      if (meta[key] === undefined && chance(rng, 0.5)) header.__metadata__ = pick(rng, [null, [], 'x', 5]);
      what = `metadata ${key} = ${sketch(meta[key])}`;
      break;
    }
    case 9:
      delete header[name];
      what = `${name} removed`;
      break;
    case 10:
      header[pick(rng, [`${name}.extra`, '__proto__', 'constructor', randomString(rng)])] = { ...e };
      what = 'an extra tensor';
      break;
    case 11:
      lengthOverride = pick(rng, [2n ** 60n, 2n ** 64n - 1n, BigInt(bytes.length), BigInt(bytes.length + 1), 0n, 1n, 7n, 100_000_001n]);
      what = `header length ${lengthOverride}`;
      break;
    case 12:
      text = pick(rng, ['[]', 'null', '"x"', '{', `${'['.repeat(100_000)}${']'.repeat(100_000)}`, `{"a":${'['.repeat(50_000)}`, '{}', `{"${'k'.repeat(10_240)}":1}`]);
      what = `header text ${sketch(text, 40)}`;
      break;
    case 13: {
      // Non-finite parameter values.
      body = data.slice();
      const at = (offs[0] + 4 * rng.int(0, Math.max(1, (offs[1] - offs[0]) / 4))) & ~3;
      new DataView(body.buffer).setFloat32(at, pick(rng, [NaN, Infinity, -Infinity]), true);
      what = `non-finite value in ${name}`;
      break;
    }
    case 14:
      header[name] = randomValue(rng);
      what = `${name} entry = ${sketch(header[name])}`;
      break;
    default:
      header.__metadata__ = { ...meta, [randomString(rng)]: randomValue(rng) };
      what = 'extra metadata';
  }
  return { file: join(text ?? JSON.stringify(header), body, lengthOverride), what };
}

export function mutateCheckpoint(rng: Rng, seeds: Uint8Array[]): { file: Uint8Array; what: string } {
  const base = pick(rng, seeds);
  const k = rng.int(0, 10);
  if (k < 2) {
    const n = chance(rng, 0.5) ? rng.int(0, 64) : rng.int(0, base.length);
    return { file: base.slice(0, n), what: `truncated to ${n} bytes` };
  }
  if (k < 4) {
    const file = base.slice();
    const flips = rng.int(1, 9);
    // Half the flips land in the length field and the header, where they matter most.
    const headerEnd = 8 + Number(new DataView(base.buffer, base.byteOffset).getBigUint64(0, true));
    for (let i = 0; i < flips; i++) {
      const at = chance(rng, 0.5) ? rng.int(0, headerEnd) : rng.int(0, file.length);
      file[at] ^= 1 << rng.int(0, 8);
    }
    return { file, what: `${flips} bit flips` };
  }
  if (k === 5) return { file: base, what: 'a seed file as saved' };
  if (k === 4) return { file: new Uint8Array([...base, ...Array.from({ length: rng.int(1, 64) }, () => rng.int(0, 256))]), what: 'trailing garbage' };
  return mutateHeader(rng, base);
}

/** What makes a loaded model unusable: wrong vocabulary for its alphabet, non-finite weights. */
async function unusable(model: Pick<RewardTrainable, 'be' | 'cfg' | 'stateTensors'>, alphabet: string): Promise<string | null> {
  const vocab = new CharTokenizer(alphabet).vocabSize;
  if (model.cfg.vocabSize !== vocab) return `loaded a model with vocabSize ${model.cfg.vocabSize} for an alphabet of ${vocab} tokens`;
  const w = await model.be.read(model.stateTensors().params);
  if (!w.every(Number.isFinite)) return 'loaded non-finite weights';
  return null;
}

function same(a: Float64Array, b: Float64Array): boolean {
  return a.length === b.length && a.every((x, i) => Object.is(x, b[i]));
}

export async function fuzzCheckpoints(rng: Rng, count: number, limitMs: number, seeds: CheckpointSeeds): Promise<TargetReport[]> {
  const reps = {
    decode: emptyReport('checkpoints: safetensors decode'),
    page: emptyReport('checkpoints: page file check (checkActorFile)'),
    actor: emptyReport('checkpoints: actor load into a model'),
    fresh: emptyReport('checkpoints: new model / trainer load (modelFromCheckpoint)'),
    reward: emptyReport('checkpoints: reward model load'),
    stateLoad: emptyReport('checkpoints: trainer state load (PpoTrainer.loadState)'),
    stateRestore: emptyReport('checkpoints: trainer state restore into a running trainer'),
  };
  const { target, alphabet } = seeds;
  const be = target.be;
  const expect = { alphabet, task: TASK };
  for (let i = 0; i < count; i++) {
    const { file, what } = mutateCheckpoint(rng, seeds.files);
    const label = `case ${i} (${what})`;
    record(
      reps.decode,
      await runCase(() => {
        decodeSafetensors(file);
        return null;
      }, limitMs),
      label,
    );
    const pageCheck = seeds.pageCheck;
    if (pageCheck)
      record(
        reps.page,
        await runCase(() => {
          const why = pageCheck(file, TASK);
          if (why === null) {
            parseCheckpoint(file); // accepted: must parse
            return null;
          }
          if (typeof why !== 'string') return `checkActorFile returned ${sketch(why)}`;
          throw new Error(why); // the reason the page shows: judged like any other message
        }, limitMs),
        label,
      );
    record(
      reps.actor,
      await runCase(async () => {
        const before = await be.read(target.params);
        try {
          loadCheckpointInto(target, file, expect);
        } catch (e) {
          if (!same(before, await be.read(target.params))) return 'a refused file changed the model';
          throw e;
        }
        return unusable(target, alphabet);
      }, limitMs),
      label,
    );
    record(
      reps.fresh,
      await runCase(async () => {
        const { model } = modelFromCheckpoint(be, file, { ...expect, head: chance(rng, 0.5) ? 'value' : undefined, seed: 3 });
        try {
          return await unusable(model, alphabet);
        } finally {
          model.dispose();
        }
      }, limitMs),
      label,
    );
    record(
      reps.reward,
      await runCase(async () => {
        const rm = RewardModel.fromCheckpoint(be, file, expect);
        try {
          return await unusable(rm.model, alphabet);
        } finally {
          rm.dispose();
        }
      }, limitMs),
      label,
    );
    const st = seeds.state;
    if (!st) continue;
    // Trainer states: mutations of the saved state itself (its tensors and config metadata).
    const { file: stateFile, what: stateWhat } = mutateCheckpoint(rng, [st.file]);
    const stateLabel = `case ${i} (state: ${stateWhat})`;
    record(
      reps.stateLoad,
      await runCase(async () => {
        const t = await PpoTrainer.loadState({ be, state: stateFile });
        try {
          return await unusableTrainer(t);
        } finally {
          t.dispose();
        }
      }, limitMs),
      stateLabel,
    );
    record(
      reps.stateRestore,
      await runCase(async () => {
        try {
          await st.trainer.restoreState(stateFile);
        } catch (e) {
          if (!sameBytes(st.file, await st.trainer.saveState())) return 'a refused state changed the running trainer';
          throw e;
        }
        const problem = await unusableTrainer(st.trainer);
        await st.trainer.restoreState(st.file); // back to the seed for the next case
        return problem;
      }, limitMs),
      stateLabel,
    );
  }
  return Object.values(reps).filter((r) => r.tried > 0);
}
