// `npm run pretrain -- --task chat-arithmetic`: makes the shipped small chat model
// (src/rl/hf/chatPretrain.ts) and writes its folder, public/models/chat-arithmetic/ by default:
// config.json, model.safetensors (BF16), tokenizer.json, tokenizer_config.json (ChatML),
// generation_config.json. --steps: the tutor phase; --sloppy-steps: the sloppy student's (0: none). On the default CPU backend (float64) the same flags write the same bytes
// on any machine. Prints a line per 25 steps, the held-out greedy accuracy and a few answers.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeBackend } from '../node/backend.ts';
import { CHAT_PRETRAIN_DEFAULTS, pretrainChatModel } from '../rl/hf/chatPretrain.ts';
import { hasCarry } from '../tasks/arithmetic.ts';
import { parseChatArithmetic } from '../tasks/chatArithmetic.ts';

export interface ChatPretrainFlags {
  seed?: string;
  backend?: string;
  steps?: string;
  'sloppy-steps'?: string;
  batch?: string;
  lr?: string;
  out?: string;
}

function positiveInt(flag: string, v: string | undefined, fallback: number): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${flag} must be a positive integer, got ${v}`);
  return n;
}

export async function pretrainChat(values: ChatPretrainFlags): Promise<number> {
  const seed = Number(values.seed ?? '1');
  if (!Number.isInteger(seed) || seed < 0) throw new Error(`--seed must be a non-negative integer, got ${values.seed}`);
  const steps = positiveInt('steps', values.steps, CHAT_PRETRAIN_DEFAULTS.steps);
  const sloppySteps = values['sloppy-steps'] === '0' ? 0 : positiveInt('sloppy-steps', values['sloppy-steps'], CHAT_PRETRAIN_DEFAULTS.sloppySteps);
  const batch = positiveInt('batch', values.batch, CHAT_PRETRAIN_DEFAULTS.batch);
  const lr = values.lr === undefined ? CHAT_PRETRAIN_DEFAULTS.lr : Number(values.lr);
  if (!(lr > 0 && lr < 1)) throw new Error(`--lr must be in (0, 1), got ${values.lr}`);
  const be = await makeBackend(values.backend ?? 'cpu');
  console.log(
    `pretrain chat-arithmetic (Qwen3 architecture) on ${be.label}: tutor ${steps} steps × ${batch} at lr ${lr}, then sloppy student ${sloppySteps} steps at ${CHAT_PRETRAIN_DEFAULTS.sloppyLr}, seed ${seed}`,
  );
  const t0 = performance.now();
  const secs = () => ((performance.now() - t0) / 1000).toFixed(1);
  const r = await pretrainChatModel(be, {
    ...CHAT_PRETRAIN_DEFAULTS,
    seed,
    steps,
    sloppySteps,
    batch,
    lr,
    warmup: Math.min(CHAT_PRETRAIN_DEFAULTS.warmup, steps),
    onStep: ({ phase, step, steps: total, loss, lr: at }) => {
      if (step % 25 === 0 || step === total) console.log(`${phase} step ${String(step).padStart(5)}  loss ${loss.toFixed(4)}  lr ${at.toExponential(2)}  ${secs()}s`);
    },
  });
  for (const s of r.evaluation.samples.slice(0, 6)) console.log(`  ${JSON.stringify(s.prompt)} → ${JSON.stringify(s.response)}  (score ${s.score})`);
  const split = (carry: boolean) => {
    const xs = r.evaluation.samples.filter((x) => {
      const p = parseChatArithmetic(x.prompt)!;
      return hasCarry(p.a, p.b) === carry;
    });
    return `${xs.filter((x) => x.score >= 0.5).length}/${xs.length}`;
  };
  console.log(`greedy held-out accuracy on ${r.evaluation.samples.length} prompts: ${r.evaluation.accuracy.toFixed(3)} (carry ${split(true)}, no carry ${split(false)})`);
  const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
  const out = values.out ?? join(root, 'public', 'models', 'chat-arithmetic');
  mkdirSync(out, { recursive: true });
  let bytes = 0;
  for (const [name, data] of r.folder.files) {
    writeFileSync(join(out, name), data);
    bytes += data.length;
  }
  console.log(`wrote ${out}/ (${r.folder.files.size} files, ${(bytes / 1024).toFixed(1)} KiB) after ${secs()}s`);
  return 0;
}
