// Files and labels the page accepts or writes: human-feedback labels (pairs a person picked,
// sent to the reward model's fine-tuning) and exported metrics (CSV and JSON), which must read
// back to the same numbers whatever the run names and metric keys hold; run files of both kinds,
// damaged, read whole or refused by name.
import { CharTokenizer } from '../model/tokenizer.ts';
import type { GptConfig } from '../model/config.ts';
import { RewardModel } from '../rl/rewardModel/rewardModel.ts';
import { DEFAULT_CONFIG } from '../rl/config.ts';
import type { Backend } from '../backend/backend.ts';
import { csvText, metricsToCsv, metricsToJson } from '../store/exportMetrics.ts';
import { readRunFile, runFileText } from '../store/runFile.ts';
import { type HfRecordedRun, hfRunFileText, readHfRunFile } from '../store/hfRunFile.ts';
import { encodeSafetensors } from '../model/safetensors.ts';
import { DEFAULT_HF_TRAIN, type HfTrainRow, type HfTrainToken } from '../rl/hf/hfTrainSettings.ts';
import { hfPpoConfig } from '../rl/hf/hfPpoDefaults.ts';
import { hfIterationTrace } from '../rl/hf/hfTrace.ts';
import { candidatePairs } from '../store/feedbackPairing.ts';
import type { RunRecord } from '../store/runs.ts';
import { getTask } from '../tasks/index.ts';
import type { PreferencePair } from '../tasks/task.ts';
import type { Rng } from '../util/rng.ts';
import type { SampleRow } from '../worker/protocol.ts';
import { chance, pick, randomNumber, randomString, sketch, HOSTILE_STRINGS } from './gen.ts';
import { emptyReport, record, runCase, type TargetReport } from './outcome.ts';

/** RFC 4180 reading: quoted cells may hold commas, quotes ("") and line breaks; rows end at CRLF, LF or CR. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"' && cell === '') quoted = true;
    else if (c === ',') {
      row.push(cell);
      cell = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
    } else cell += c;
  }
  if (cell !== '' || row.length > 0) {
    row.push(cell);
    rows.push(row);
  }
  return rows;
}

const METRIC_KEYS = ['policy_loss', 'kl', 'score_mean', 'clipfrac', 'lr', 'time/rollout_ms'];

function hostileText(rng: Rng): string {
  return pick(rng, [randomString(rng, 16), pick(rng, HOSTILE_STRINGS), 'a,b', 'say "hi"', 'line1\nline2', 'cr\rhere', 'crlf\r\n', '=1+1', '', ' lead', '"', ',']);
}

export function randomRuns(rng: Rng): RunRecord[] {
  return Array.from({ length: rng.int(0, 4) }, (_, r) => {
    const keys = Array.from({ length: rng.int(0, 4) }, () => (chance(rng, 0.8) ? pick(rng, METRIC_KEYS) : hostileText(rng)));
    return {
      id: chance(rng, 0.7) ? `run-${r}` : hostileText(rng),
      name: hostileText(rng),
      color: '#0072B2',
      visible: true,
      config: { ...DEFAULT_CONFIG },
      backend: chance(rng, 0.5) ? 'webgpu' : 'cpu',
      createdAt: rng.int(0, 2 ** 40),
      metrics: Array.from({ length: rng.int(0, 5) }, (_, i) => ({
        iter: i + 1,
        values: Object.fromEntries(keys.filter(() => chance(rng, 0.8)).map((k) => [k, randomNumber(rng)])),
      })),
    };
  });
}

/** null when the CSV and JSON exports read back to the runs' values, else what differs. */
function checkExports(runs: RunRecord[]): string | null {
  const rows = parseCsv(metricsToCsv(runs));
  const header = rows[0];
  // Text cells a spreadsheet would run as a formula are written with a leading apostrophe.
  const formula = /^[=+\-@\t\r]/;
  for (const [i, row] of rows.entries()) {
    const cells = i === 0 ? row : row.slice(0, 2);
    const bad = cells.find((c) => formula.test(c));
    if (bad !== undefined) return `CSV row ${i} has a cell a spreadsheet runs as a formula: ${sketch(bad)}`;
  }
  // Neutralising is lossy ("=a" and "'=a" both read back as "'=a"), so each column is matched by
  // position to the metric it was written for: the names, sorted, as the exporter orders them.
  const cols = [...new Set(runs.flatMap((r) => r.metrics.flatMap((m) => Object.keys(m.values))))].filter((k) => k !== 'iter').sort();
  if (header.length !== 3 + cols.length) return `CSV header has ${header.length} cells, expected ${3 + cols.length}`;
  for (const [k, col] of cols.entries()) if (header[3 + k] !== csvText(col)) return `CSV header ${sketch(header[3 + k])} for the metric ${sketch(col)}`;
  const expected = runs.flatMap((r) => r.metrics.map((m) => ({ r, m })));
  if (rows.length - 1 !== expected.length) return `CSV has ${rows.length - 1} data rows, expected ${expected.length}`;
  for (const [i, { r, m }] of expected.entries()) {
    const row = rows[i + 1];
    if (row.length !== header.length) return `CSV row ${i + 1} has ${row.length} cells, header ${header.length}`;
    if (row[0] !== csvText(r.id) || row[1] !== csvText(r.name) || row[2] !== String(m.iter))
      return `CSV row ${i + 1} reads back as ${sketch(row.slice(0, 3))}, wrote ${sketch([r.id, r.name, m.iter])}`;
    for (const [k, col] of cols.entries()) {
      const want = Object.hasOwn(m.values, col) ? (m.values as Record<string, number>)[col] : undefined;
      const got = row[k + 3];
      if (want === undefined ? got !== '' : Number(got) !== want && !(Number.isNaN(want) && got === 'NaN')) return `CSV ${sketch(col)} = ${sketch(got)}, wrote ${want}`;
    }
    for (const k of Object.keys(m.values)) if (!cols.includes(k)) return `CSV lost the column ${sketch(k)}`;
  }
  const doc = JSON.parse(metricsToJson(runs)) as { runs: { id: string; name: string; metrics: { iter: number; values: Record<string, number | null> }[] }[] };
  for (const [i, r] of runs.entries()) {
    const back = doc.runs[i];
    if (back.id !== r.id || back.name !== r.name) return `JSON run ${i} reads back as ${sketch([back.id, back.name])}`;
    for (const [j, m] of r.metrics.entries()) {
      for (const [k, v] of Object.entries(m.values)) {
        const got = back.metrics[j].values[k];
        if (Number.isFinite(v) ? got !== v && !(v === 0 && got === 0) : got !== null) return `JSON ${sketch(k)} = ${sketch(got)}, wrote ${v}`;
      }
    }
  }
  return null;
}

/**
 * A run file's text damaged the ways files are: cut short, a byte changed, a value replaced by a
 * hostile one (another type, a huge number, text where a number goes), a field dropped.
 */
export function mutatedRunFile(rng: Rng, text: string): string {
  const cut = () => text.slice(0, rng.int(0, text.length));
  const flip = () => {
    const i = rng.int(0, text.length);
    return text.slice(0, i) + String.fromCharCode(rng.int(32, 127)) + text.slice(i + 1);
  };
  const value = () => {
    const doc = JSON.parse(text);
    const paths: { parent: Record<string, unknown> | unknown[]; key: string | number }[] = [];
    const walk = (x: unknown) => {
      if (Array.isArray(x)) {
        for (const [i, v] of x.entries()) {
          paths.push({ parent: x, key: i });
          walk(v);
        }
      } else if (x && typeof x === 'object') {
        for (const [k, v] of Object.entries(x)) {
          paths.push({ parent: x as Record<string, unknown>, key: k });
          walk(v);
        }
      }
    };
    walk(doc);
    const { parent, key } = pick(rng, paths);
    if (chance(rng, 0.3) && !Array.isArray(parent)) delete parent[key as string];
    else (parent as Record<string | number, unknown>)[key] = pick(rng, [randomNumber(rng), hostileText(rng), null, true, [], {}, 1e308, -1, 2 ** 53, '__proto__']);
    return JSON.stringify(doc);
  };
  return pick(rng, [cut, flip, value, value, value])();
}

/** null when a mutated run file is read whole with finite metrics; a refusal is thrown (a RunFileError, named). */
function checkRunFile(text: string): string | null {
  const back = readRunFile(text);
  for (const p of back.run.metrics) for (const [k, v] of Object.entries(p.values)) if (!Number.isFinite(v)) return `read a non-finite ${sketch(k)} = ${v}`;
  return null;
}

/** Labels as the feedback view sends them: mostly in-alphabet text, sometimes not. */
function randomLabels(rng: Rng, alphabet: string): PreferencePair[] {
  const chars = [...alphabet];
  const text = (max: number) => (chance(rng, 0.98) ? Array.from({ length: rng.int(0, max + 1) }, () => pick(rng, chars)).join('') : hostileText(rng));
  const n = chance(rng, 0.05) ? 0 : rng.int(1, 9);
  return Array.from({ length: n }, () => {
    const prompt = text(5);
    const chosen = text(chance(rng, 0.1) ? 30 : 5);
    return { prompt, chosen, rejected: chance(rng, 0.1) ? chosen : text(5) };
  });
}

function checkPairs(rows: SampleRow[]): string | null {
  const seen = new Set<string>();
  for (const p of candidatePairs(rows, new Set())) {
    if (p.a.response === p.b.response) return `offered a pair of identical responses ${sketch(p.a.response)}`;
    if (p.a.prompt !== p.prompt || p.b.prompt !== p.prompt) return 'offered a pair across prompts';
    if (seen.has(p.key)) return `offered the pair ${sketch(p.key)} twice`;
    seen.add(p.key);
  }
  return null;
}

/** A run the metric vocabulary knows (the random runs' keys include hostile ones, which a run file refuses whole). */
const VALID_RUN: RunRecord = {
  id: 'run-1',
  name: 'run',
  color: '#0072B2',
  visible: true,
  config: { ...DEFAULT_CONFIG },
  backend: 'webgpu',
  createdAt: 0,
  metrics: Array.from({ length: 4 }, (_, i) => ({ iter: i, values: { reward_mean: i / 4, kl: 0.01 * i, policy_loss: -0.1 } })),
  evals: [{ iter: 0, values: { accuracy: 0.5 } }],
};

/** A run of a model of your own (hfRunFile.ts): two rows of two responses, an adapter and its state. */
function validHfRun(): HfRecordedRun {
  const token = (id: number, clip: HfTrainToken['clip']): HfTrainToken => ({ id, text: ` ${id}`, old: -1.5, ref: -1.25, logprob: -1.4, advantage: id % 2 ? 0.7 : -0.7, clip });
  const row = (iter: number): HfTrainRow => ({
    iter,
    reward_mean: 0.5,
    kl: 1e-3 * iter,
    response_length_mean: 2,
    policy_loss: -0.02,
    clipfrac: 0.25,
    value_loss: null,
    seconds: 1.5,
    responses: [0, 1].map((j) => ({ prompt: `What is ${j} + ${iter}?`, response: ` ${j + iter}`, score: j, tokens: [token(j + 3, null), token(j + 4, j ? 'upper' : 'lower')] })),
  });
  const tensor = (name: string, n: number) => ({ name, dtype: 'F32' as const, shape: [n], data: Float32Array.from({ length: n }, (_, i) => i / n - 0.5) });
  // iteration 2 as the inspector reads it: the two responses of one GRPO group, one update step
  const ba = (f: (i: number) => number) => Float64Array.from({ length: 4 }, (_, i) => f(i));
  const old = ba((i) => -1.5 + 0.1 * i);
  const cfg = hfPpoConfig({ estimator: 'group_norm', samplesPerPrompt: 2, maxNewTokens: 2, seed: 7, klCoef: 0.01, lr: 1e-3 });
  const trace = hfIterationTrace({
    iter: 2,
    cfg,
    prompts: [
      [1, 2],
      [1, 2],
    ],
    responses: [
      [3, 4],
      [4, 5],
    ],
    group: Int32Array.from([0, 0]),
    padId: 0,
    A: 2,
    actionMask: ba(() => 1),
    scores: [0, 1],
    oldLogprobs: old,
    refLogprobs: ba((i) => -1.25 - 0.05 * i),
    values: null,
    kl: ba((i) => 0.25 - 0.15 * i),
    rewards: ba((i) => (i === 3 ? 1 : 0)),
    advantages: ba((i) => (i < 2 ? -1 : 1)),
    returns: ba((i) => (i < 2 ? 0 : 1)),
    steps: [
      {
        epoch: 0,
        index: 0,
        rows: Int32Array.from([0, 1]),
        width: 2,
        logprobs: ba((i) => old[i] + 0.3 * (i - 1.5)),
        values: null,
        policyStats: Float64Array.from([-0.02, 0.25, 0, 0.01]),
        valueStats: null,
      },
    ],
  });
  return {
    savedAt: '2026-11-30T10:00:00.000Z',
    model: { label: 'tiny', architecture: 'Qwen3ForCausalLM', nLayer: 2, dModel: 64, vocab: 384 },
    settings: { ...DEFAULT_HF_TRAIN, iterations: 2 },
    iterations: 2,
    rows: [row(1), row(2)],
    evals: [{ when: 'before', greedyAccuracy: 0.25, count: 16 }],
    adapter: {
      config: JSON.stringify({ peft_type: 'LORA', r: 8, lora_alpha: 16, target_modules: ['q_proj', 'v_proj'] }),
      weights: encodeSafetensors([tensor('base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight', 8)], { format: 'pt' }),
      state: encodeSafetensors([tensor('actor.params', 16)]),
    },
    lastTrace: { trace, prompts: ['What is 0 + 2?', 'What is 1 + 2?'], tokenText: [' 3', ' 4', ' 4', ' 5'], endedWithEos: [true, false] },
  };
}

/** null when a mutated run file of a model of your own is read whole with finite numbers; a refusal is thrown (a RunFileError, named). */
function checkHfRunFile(text: string): string | null {
  const back = readHfRunFile(text);
  for (const row of back.rows) {
    const numbers = [
      row.reward_mean,
      row.kl,
      row.policy_loss,
      row.clipfrac,
      row.seconds,
      ...row.responses.flatMap((r) => [r.score, ...r.tokens.flatMap((t) => [t.old, t.ref, t.logprob, t.advantage])]),
    ];
    if (!numbers.every(Number.isFinite)) return `read a non-finite number in row ${row.iter}`;
  }
  return null;
}

const TINY_RM: Omit<GptConfig, 'vocabSize' | 'head'> = { nLayer: 1, nHead: 2, dModel: 32, maxSeq: 16 };

export async function fuzzFiles(rng: Rng, count: number, limitMs: number, be: Backend): Promise<TargetReport[]> {
  const exp = emptyReport('files: exported metrics read back (CSV, JSON)');
  const pairs = emptyReport('files: feedback pairs offered');
  const labels = emptyReport('files: feedback labels → reward model fine-tuning');
  const runFiles = emptyReport('files: damaged run files refused by name');
  const hfRunFiles = emptyReport('files: damaged run files of your own model refused by name');
  const hfRun = validHfRun();
  const hfSaved = hfRunFileText(hfRun);
  // the playground's file carries its inspected iterations too: the own-model file's trace stands in
  const traces = hfRun.lastTrace ? [{ runId: VALID_RUN.id, ...hfRun.lastTrace }] : [];
  const task = getTask('sentiment');
  const rm = RewardModel.fresh(be, { ...TINY_RM, vocabSize: new CharTokenizer(task.alphabet).vocabSize, head: 'reward' }, task.alphabet, task.name, 5);
  try {
    for (let i = 0; i < count; i++) {
      const runs = randomRuns(rng);
      record(exp, await runCase(() => checkExports(runs), limitMs), `case ${i} ${sketch(runs.map((r) => [r.id, r.name]))}`);
      const saved = runFileText({ ...VALID_RUN, name: runs[0]?.name ?? 'run' }, null, traces);
      const mutated = mutatedRunFile(rng, saved);
      record(runFiles, await runCase(() => checkRunFile(mutated), limitMs), `case ${i} ${sketch(mutated)}`);
      const hfMutated = mutatedRunFile(rng, hfSaved);
      record(hfRunFiles, await runCase(() => checkHfRunFile(hfMutated), limitMs), `case ${i} ${sketch(hfMutated)}`);
      const rows: SampleRow[] = Array.from({ length: rng.int(0, 10) }, () => ({
        prompt: pick(rng, ['a', 'b', hostileText(rng)]),
        response: pick(rng, ['x', 'y', 'z', hostileText(rng)]),
        reward: randomNumber(rng),
        endedWithEos: chance(rng, 0.5),
        tokens: [],
      }));
      record(pairs, await runCase(() => checkPairs(rows), limitMs), `case ${i}`);
      // Fine-tuning is the slow one: every fourth case.
      if (i % 4 === 0) {
        const ls = randomLabels(rng, task.alphabet);
        record(
          labels,
          await runCase(async () => {
            const before = await be.read(rm.model.stateTensors().params);
            try {
              const r = await rm.trainOnLabels(ls, { epochs: 1 });
              const ok = [r.before.loss, r.after.loss, r.before.accuracy, r.after.accuracy].every(Number.isFinite);
              const w = await be.read(rm.model.stateTensors().params);
              return ok && w.every(Number.isFinite) ? null : `non-finite result ${sketch(r)}`;
            } catch (e) {
              const after = await be.read(rm.model.stateTensors().params);
              if (!before.every((x, k) => Object.is(x, after[k]))) return `refused labels changed the reward model: ${(e as Error).message}`;
              throw e;
            }
          }, limitMs),
          `case ${i} ${sketch(ls)}`,
        );
      }
    }
  } finally {
    rm.dispose();
  }
  return [exp, pairs, labels, runFiles, hfRunFiles];
}
