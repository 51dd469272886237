// npm run train -- --model DIR: PPO or GRPO with LoRA on a Hugging Face model folder, headless.
// The prompts come from a file (one a line) and the scores from the user's JavaScript reward
// function `(prompt, response) => number` run in the QuickJS sandbox the page uses, or both from a
// task (--task chat-arithmetic for chat models, or a playground task: arithmetic, sentiment, stop;
// with held-out accuracy before and after: hfRewardSource.ts); the actor (and, for
// GAE, the critic with a value head) are LoRA adapters on the one frozen base, the reference is the
// base (src/rl/hf/hfPpo.ts). One JSON line of metrics per iteration (--out and stdout); at the end
// --save-adapter writes the actor's adapter as PEFT saves it, for `npm run logprobs -- --adapter`
// or PeftModel.from_pretrained. Bad input: one line naming the flag and what is allowed, exit 2.
import { appendFileSync, existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { type LoraSettings, loraScaling } from '../model/hf/lora.ts';
import { checkLoraTargets, loraModulesOf, plannedLoraTargets } from '../model/hf/loraModules.ts';
import { backendOffer, type LoadRun, SMALLEST_RUN } from '../model/hf/loadPlan.ts';
import { planMemory } from '../model/hf/memoryPlan.ts';
import { disposeLoraTrainable, newLoraTrainable } from '../model/hf/loraParams.ts';
import { ADAPTER_CONFIG, ADAPTER_WEIGHTS, exportPeftAdapter, loadPeftValues, readPeftAdapter } from '../model/hf/peftAdapter.ts';
import { DEFAULT_CONFIG } from '../rl/configKnobs.ts';
import { hfPpoConfig } from '../rl/hf/hfPpoDefaults.ts';
import { HfNanGuard, nonFiniteMessage } from '../rl/hf/hfGuard.ts';
import { type HfEstimator, hfPpoProblem } from '../rl/hf/hfPpo.ts';
import { accuracyByGroup, heldOutEvaluation } from '../rl/hf/hfEval.ts';
import { CHAT_ARITHMETIC_NAME, chatArithmeticCarries } from '../tasks/chatArithmetic.ts';
import { endsWithEos } from '../rl/hf/hfTaskRule.ts';
import { GROUP_ESTIMATORS } from '../reference/groupAdvantages.ts';
import { NodeFolder } from '../node/hfFolder.ts';
import { InputRefusal, openModel, promptIds, refusingBadInput } from './hfModelArgs.ts';
import { rewardSource } from './hfRewardSource.ts';

export const HF_TRAIN_USAGE =
  'usage: npm run train -- --model DIR (--prompts FILE --reward-function FILE.js | --task chat-arithmetic|arithmetic|sentiment|stop [--eval-count N] [--eval-samples K]) --lora-rank R [--lora-alpha A] [--lora-targets q_proj,v_proj,...] [--rslora]\n' +
  '       [--iters N] [--estimator gae|group_norm|...] [--samples-per-prompt G] [--batch N] [--max-new-tokens T] [--temperature X] [--kl-coef B]\n' +
  '       [--lr X] [--epochs E] [--mini-batches M] [--seed S] [--save-adapter DIR] [--adapter DIR] [--chat] [--out metrics.jsonl] [--quiet]\n' +
  '       [--backend webgpu|cpu] [--weights f16|f32] [--gpu-memory GiB]';

const ESTIMATORS: readonly HfEstimator[] = ['gae', ...GROUP_ESTIMATORS];

const parse = (args?: string[]) =>
  parseArgs({
    ...(args ? { args } : {}),
    options: {
      model: { type: 'string' },
      prompts: { type: 'string' },
      'reward-function': { type: 'string' },
      task: { type: 'string' },
      'eval-count': { type: 'string', default: '32' },
      'eval-samples': { type: 'string', default: '4' },
      'lora-rank': { type: 'string' },
      'lora-alpha': { type: 'string' },
      'lora-targets': { type: 'string' },
      rslora: { type: 'boolean', default: false },
      iters: { type: 'string', default: '10' },
      estimator: { type: 'string', default: 'group_norm' },
      'samples-per-prompt': { type: 'string' },
      batch: { type: 'string', default: '8' },
      'max-new-tokens': { type: 'string', default: '64' },
      temperature: { type: 'string', default: '1' },
      'kl-coef': { type: 'string', default: String(DEFAULT_CONFIG.klCoef) },
      lr: { type: 'string', default: '1e-4' },
      epochs: { type: 'string', default: '1' },
      'mini-batches': { type: 'string', default: '1' },
      seed: { type: 'string', default: '1' },
      'save-adapter': { type: 'string' },
      adapter: { type: 'string' },
      chat: { type: 'boolean', default: false },
      out: { type: 'string' },
      quiet: { type: 'boolean', default: false },
      backend: { type: 'string', default: 'webgpu' },
      weights: { type: 'string' },
      'gpu-memory': { type: 'string' },
    },
  }).values;
type Flags = ReturnType<typeof parse>;

/** A number flag in [min, max] (an integer when asked), or an InputRefusal naming the flag and the range. */
function numberFlag(flags: Flags, name: keyof Flags, min: number, max: number, integer = false): number {
  const raw = flags[name];
  const x = Number(raw);
  if (typeof raw !== 'string' || raw.trim() === '' || !Number.isFinite(x) || x < min || x > max || (integer && !Number.isInteger(x)))
    throw new InputRefusal(`--${name} = ${JSON.stringify(raw)}: allowed: ${integer ? 'an integer' : 'a number'} from ${min} to ${max}`);
  return x;
}

/** `args`: the flags as on the command line (default: this process's); `npm run learning -- --model` passes its own. */
export async function trainHf(args?: string[]): Promise<number> {
  let flags: Flags;
  try {
    flags = parse(args);
  } catch (e) {
    console.error(`npm run train: ${(e as Error).message}\n${HF_TRAIN_USAGE}`);
    return 2;
  }
  return refusingBadInput('train', () => run(flags));
}

async function run(flags: Flags): Promise<number> {
  // Everything that can be checked without the model is checked first.
  const seed = numberFlag(flags, 'seed', 0, 2 ** 32 - 1, true);
  const iters = numberFlag(flags, 'iters', 0, 100_000, true);
  const batchFlag = numberFlag(flags, 'batch', 1, 1024, true);
  const evalCount = flags.task === undefined ? 0 : numberFlag(flags, 'eval-count', 0, 1000, true);
  const evalSamples = numberFlag(flags, 'eval-samples', 0, 64, true);
  const source = await rewardSource(flags, { seed, prompts: iters * batchFlag, evalCount });
  const chat = flags.chat || source.chat;
  if (flags['lora-rank'] === undefined) throw new InputRefusal(`--lora-rank is required (the adapters' rank; 8 is a common choice)\n${HF_TRAIN_USAGE}`);
  const rank = numberFlag(flags, 'lora-rank', 1, 1024, true);
  const alpha = flags['lora-alpha'] === undefined ? 2 * rank : numberFlag(flags, 'lora-alpha', 1e-6, 1e6);
  const estimator = flags.estimator as HfEstimator;
  if (!ESTIMATORS.includes(estimator)) throw new InputRefusal(`--estimator = ${JSON.stringify(flags.estimator)}: allowed: ${ESTIMATORS.join(', ')}`);
  const samplesPerPrompt = flags['samples-per-prompt'] === undefined ? (estimator === 'gae' ? 1 : 4) : numberFlag(flags, 'samples-per-prompt', 1, 64, true);
  const batch = Math.min(batchFlag, source.train.length);
  const maxNewTokens = numberFlag(flags, 'max-new-tokens', 1, 4096, true);
  const temperature = numberFlag(flags, 'temperature', 0.01, 10);
  const klCoef = numberFlag(flags, 'kl-coef', 0, 10);
  const lr = numberFlag(flags, 'lr', 1e-12, 1);
  const ppoEpochs = numberFlag(flags, 'epochs', 1, 16, true);
  const miniBatches = numberFlag(flags, 'mini-batches', 1, 1024, true);
  const saveTo = flags['save-adapter'];
  if (saveTo !== undefined && existsSync(saveTo) && !statSync(saveTo).isDirectory()) throw new InputRefusal(`--save-adapter: ${saveTo} is a file, not a folder`);

  let prompts: number[][] = [];
  let heldOut: number[][] = [];
  let loadRun: LoadRun = SMALLEST_RUN;
  const { model, info, tokenizer, precision, memoryBytes } = await openModel({ ...flags, adapter: undefined }, (tok, folderInfo) => {
    if (chat && !tok.hasChatTemplate)
      throw new InputRefusal(`${flags.task !== undefined ? `--task ${flags.task}` : '--chat'}: the model's tokenizer_config.json has no chat_template`);
    // held-out prompts come from a task only
    const where = (i: number) => (flags.task !== undefined ? `--task ${flags.task}` : `--prompts: line ${i + 1}`);
    prompts = source.train.map((line, i) => promptIds(tok, line, chat, where(i)));
    prompts.forEach((p, i) => {
      if (p.length === 0) throw new InputRefusal(`--prompts: line ${i + 1} tokenizes to no token`);
    });
    heldOut = source.heldOut.map((line, i) => promptIds(tok, line, chat, where(i)));
    const longest = Math.max(...prompts.map((p) => p.length), ...heldOut.map((p) => p.length));
    if (longest + maxNewTokens > folderInfo.arch.maxPositions)
      throw new InputRefusal(`--prompts and --max-new-tokens: ${longest} + ${maxNewTokens} tokens exceed the model's max_position_embeddings ${folderInfo.arch.maxPositions}`);
    loadRun = { batch: batch * samplesPerPrompt, promptTokens: longest, responseTokens: maxNewTokens };
    return loadRun;
  });
  const family = info.arch.family;
  const targets = flags['lora-targets'] === undefined ? [...loraModulesOf(family)] : flags['lora-targets'].split(',').map((t) => t.trim());
  try {
    checkLoraTargets(family, targets);
  } catch (e) {
    throw new InputRefusal(`--lora-targets: ${(e as Error).message}`);
  }
  const settings: LoraSettings = { r: rank, alpha, rslora: flags.rslora, targets };
  const be = model.be;
  // The whole run planned before any adapter or optimiser state is made: the load planned one
  // rollout; training adds the adapters, their moments, the critic and one minibatch's tape.
  const offer = backendOffer(be, memoryBytes);
  if (offer) {
    const rows = loadRun.batch;
    const plan = planMemory(
      info.arch,
      {
        ...loadRun,
        trainBatch: Math.max(1, Math.floor(rows / miniBatches)),
        updateSteps: ppoEpochs * miniBatches,
        lora: { rank, targets: plannedLoraTargets(info.arch, targets), roles: estimator === 'gae' ? 2 : 1 },
        valueHead: estimator === 'gae',
        weightDtype: model.weights.dtype,
      },
      offer,
    );
    if (!plan.fits) {
      model.dispose();
      throw new InputRefusal(
        `${plan.message} Flags: more --mini-batches keeps a smaller tape; a smaller --batch, --samples-per-prompt or --max-new-tokens, or a lower --lora-rank, lowers the rest; --gpu-memory GiB states the GPU's memory.`,
      );
    }
    // Beyond the weights (in use now) and the adapters, the pool keeps at most what the plan's
    // phases need, so iterations of other lengths do not pile their sizes up.
    be.boundMemory(plan.workingBytes + plan.items.filter((i) => i.what === 'adapters').reduce((n, i) => n + i.bytes, 0));
  }
  const actor = newLoraTrainable(model, settings, seed);
  const critic = estimator === 'gae' ? newLoraTrainable(model, settings, (seed ^ 0x2545f491) >>> 0, true) : null;
  try {
    if (flags.adapter !== undefined) {
      let adapter: Awaited<ReturnType<typeof readPeftAdapter>>;
      try {
        adapter = await readPeftAdapter(new NodeFolder(flags.adapter), info.arch);
        loadPeftValues(model, actor, adapter);
      } catch (e) {
        throw new InputRefusal(`--adapter: ${(e as Error).message}`);
      }
    }
    const cfg = hfPpoConfig({ estimator, samplesPerPrompt, maxNewTokens, temperature, seed, klCoef, lr, ppoEpochs, miniBatches });
    const eosIds = info.generation.eosTokenIds;
    const roles = { model, actor, critic, eosIds, padId: eosIds[0] ?? 0 };
    const problem = hfPpoProblem(roles, cfg, batch * samplesPerPrompt);
    if (problem)
      throw new InputRefusal(
        problem.startsWith('miniBatches') ? `--mini-batches: ${problem}` : `--estimator ${estimator}: ${problem.replace('samplesPerPrompt', '--samples-per-prompt')}`,
      );

    const lineOf = new Map(prompts.map((p, i) => [p, source.train[i]]));
    const decode = (ids: readonly number[]) => tokenizer.decode(ids, { skipSpecialTokens: true });
    const score = (ps: readonly (readonly number[])[], responses: readonly (readonly number[])[]) =>
      source.score(
        ps.map((p, b) => ({
          prompt: lineOf.get(p as number[]) ?? '',
          response: decode(responses[b]),
          endedWithEos: endsWithEos(responses[b], eosIds),
        })),
      );
    const evaluate = async () => {
      const rule = source.rule;
      if (!rule || heldOut.length === 0) return null;
      const held = { prompts: heldOut.map((ids, i) => ({ ids, text: source.heldOut[i] })), decode, score: rule };
      const opts = { maxNewTokens, eosIds, padId: roles.padId, batch: Math.max(batch * samplesPerPrompt, 1) };
      const { greedy: r, sampled } = await heldOutEvaluation(model, actor.adapters, held, opts, { samples: evalSamples, temperature, runSeed: seed });
      // the task's two kinds of problem apart: with and without the units' carry
      const carry = (prompt: string) => {
        const c = chatArithmeticCarries(prompt);
        return c === null ? null : c ? 'carry' : 'no_carry';
      };
      return {
        ...(sampled ? { accuracy: sampled.accuracy, score_mean: sampled.scoreMean, samples_per_prompt: evalSamples } : {}),
        greedy_accuracy: r.accuracy,
        greedy_score_mean: r.scoreMean,
        count: r.samples.length,
        ...(flags.task !== CHAT_ARITHMETIC_NAME ? {} : { by_carry: { greedy: accuracyByGroup(r, carry), ...(sampled ? { sampled: accuracyByGroup(sampled, carry) } : {}) } }),
        example: r.samples[0],
      };
    };
    if (flags.out) writeFileSync(flags.out, '');
    const emit = (row: Record<string, unknown>) => {
      const line = JSON.stringify(row);
      if (flags.out) appendFileSync(flags.out, `${line}\n`);
      if (!flags.quiet || !flags.out) console.log(line);
    };
    console.error(
      `${estimator === 'gae' ? 'PPO (GAE, a critic)' : `${estimator} (no critic)`} with LoRA r ${rank}, α ${alpha} (scale ${loraScaling(settings)}) on ${targets.join(', ')} of ${info.arch.architecture} on ${be.label} (${precision}), ` +
        `${iters} iterations of ${batch} prompts × ${samplesPerPrompt} sample${samplesPerPrompt === 1 ? '' : 's'}, ≤ ${maxNewTokens} new tokens, seed ${seed}; reward: ${source.label}` +
        (source.heldOut.length > 0
          ? `; held-out accuracy on ${source.heldOut.length} prompts before and after, greedy${evalSamples > 0 ? ` and over ${evalSamples} samples a prompt at temperature ${temperature}` : ''}`
          : ''),
    );
    const before = await evaluate();
    if (before) emit({ eval_before: before });
    const guard = new HfNanGuard(be);
    let failed = false;
    for (let it = 0; it < iters; it++) {
      const start = (it * batch) % prompts.length;
      const chosen = Array.from({ length: batch }, (_, i) => prompts[(start + i) % prompts.length]);
      const t0 = performance.now();
      const guarded = await guard.iteration(roles, chosen, score, cfg, it);
      if (guarded.nonFinite) {
        // The adapters are as after the last good iteration: they are still saved below.
        console.error(`npm run train: ${nonFiniteMessage(guarded.nonFinite)}`);
        failed = true;
        break;
      }
      const m = guarded.metrics;
      emit({
        iter: it + 1,
        reward_mean: m.scoreMean,
        kl: m.klMean,
        response_length_mean: m.responseLength,
        policy_loss: m.policyLoss,
        clipfrac: m.clipfrac,
        ...(m.valueLoss === null ? {} : { value_loss: m.valueLoss }),
        time_s: (performance.now() - t0) / 1000,
      });
    }
    guard.dispose();
    const after = iters > 0 && !failed ? await evaluate() : null;
    if (after) emit({ eval: after, iter: iters });
    if (saveTo !== undefined) {
      const files = await exportPeftAdapter(model, actor, flags.model!);
      mkdirSync(saveTo, { recursive: true });
      writeFileSync(join(saveTo, ADAPTER_CONFIG), files[ADAPTER_CONFIG]);
      writeFileSync(join(saveTo, ADAPTER_WEIGHTS), files[ADAPTER_WEIGHTS]);
      console.error(`adapter saved to ${saveTo} (${ADAPTER_CONFIG}, ${ADAPTER_WEIGHTS}: ${files[ADAPTER_WEIGHTS].length} bytes)`);
    }
    return failed ? 1 : 0;
  } finally {
    disposeLoraTrainable(be, actor);
    if (critic) disposeLoraTrainable(be, critic);
    model.dispose();
  }
}
