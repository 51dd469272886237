// The job's optional model section: which Hugging Face model the exported job trains, and whether
// it trains LoRA adapters on it instead of every weight (issue #32 item 4). Both engines build the
// adapters with PEFT on their default backends (verl FSDP, OpenRLHF DeepSpeed) from the same three
// settings, so one section serves both; the key names each engine gives them are below, and are
// checked against the engines' config lists (tests/fixtures) in tests/unit/scaleup_model.test.ts.
import { DEFAULT_MODEL } from './engines.ts';

export interface JobLora {
  /** PEFT's r: the adapters' rank. */
  r: number;
  /** PEFT's lora_alpha: the update is scaled by alpha / r. */
  alpha: number;
  /** PEFT's target_modules: module names (q_proj, c_attn, …) or ["all-linear"] alone. */
  targets: string[];
}

export interface JobModel {
  /** Hub id or a path on the machine that runs the job; written into the script, not read here. */
  modelPath: string;
  /** Null: full fine-tuning, as without a model section. */
  lora: JobLora | null;
}

/** vLLM, which rolls out in both jobs, serves adapters up to rank 512 (verl v0.9.0 verl/workers/rollout/vllm_rollout/utils.py get_vllm_max_lora_rank). */
export const LORA_RANK_RANGE = { min: 1, max: 512 };
/** Both engines type alpha as an int (verl verl/workers/config/model.py lora_alpha; OpenRLHF --ds.lora.alpha type=int); up to twice the largest rank. */
export const LORA_ALPHA_RANGE = { min: 1, max: 1024 };

/**
 * PEFT's shorthand for every linear layer but the output head, and both engines' default
 * (verl verl/trainer/config/model/hf_model.yaml target_modules; OpenRLHF --ds.lora.target_modules).
 * PEFT expands it only as a bare string, never as a list item (peft tuners_utils
 * _maybe_include_all_linear_layers), so it cannot be combined with module names.
 */
export const ALL_LINEAR = 'all-linear';
export const DEFAULT_LORA_TARGETS: readonly string[] = [ALL_LINEAR];

/**
 * alpha = 2r keeps the adapters' scale alpha / r at 2 whatever the rank; the engines' fixed
 * default (16 in both) would halve the update each time the rank doubles.
 */
export const defaultLoraAlpha = (r: number): number => 2 * r;

/** verl Hydra keys under actor_rollout_ref.model and critic.model (verl v0.9.0 verl/trainer/config/model/hf_model.yaml; FSDP's flat keys, not the Megatron-only model.lora.*). */
export const VERL_LORA_KEYS = { rank: 'lora_rank', alpha: 'lora_alpha', targets: 'target_modules' } as const;
/** vLLM must load the real base weights when adapters are synced (verl v0.9.0 docs/advance/ppo_lora.rst, "Required configurations"). */
export const VERL_LORA_LOAD_FORMAT = { key: 'actor_rollout_ref.rollout.load_format', value: 'safetensors' } as const;
/** OpenRLHF flags, shared by actor and critic (OpenRLHF v0.11.0 openrlhf/cli/train_ppo_ray.py; ppo_actor.py and ppo_critic.py read args.ds.lora). */
export const OPENRLHF_LORA_FLAGS = { rank: '--ds.lora.rank', alpha: '--ds.lora.alpha', targets: '--ds.lora.target_modules' } as const;

/** The path the script's MODEL defaults to. */
export const jobModelPath = (model: JobModel | undefined): string => model?.modelPath ?? DEFAULT_MODEL;

/** True when the targets are PEFT's all-linear shorthand (which then travels as a bare string). */
export const isAllLinear = (targets: readonly string[]): boolean => targets.length === 1 && targets[0] === ALL_LINEAR;

/**
 * Hub ids and plain paths only: the path goes unquoted through bash, Hydra (where "," would
 * start a list) and argparse (where a leading "-" would read as a flag).
 */
const MODEL_PATH = /^[A-Za-z0-9_./][A-Za-z0-9_./-]*$/;
/** A module name or a dotted suffix of one (PEFT matches by suffix). */
const MODULE_NAME = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*$/;

export type ModelField = 'modelPath' | 'lora.r' | 'lora.alpha' | 'lora.targets';

export interface ModelProblem {
  field: ModelField;
  value: string;
  allowed: string;
}

const intRange = (r: { min: number; max: number }) => `an integer from ${r.min} to ${r.max}`;
const inRange = (x: number, r: { min: number; max: number }) => Number.isInteger(x) && x >= r.min && x <= r.max;

/** What is wrong with a model section, each problem naming its field and what it allows. */
export function modelProblems(m: JobModel): ModelProblem[] {
  const out: ModelProblem[] = [];
  if (!MODEL_PATH.test(m.modelPath)) {
    out.push({ field: 'modelPath', value: m.modelPath, allowed: 'a Hub id or path of letters, digits and _ . / - (not starting with -)' });
  }
  const l = m.lora;
  if (l === null) return out;
  if (!inRange(l.r, LORA_RANK_RANGE)) out.push({ field: 'lora.r', value: String(l.r), allowed: intRange(LORA_RANK_RANGE) });
  if (!inRange(l.alpha, LORA_ALPHA_RANGE)) out.push({ field: 'lora.alpha', value: String(l.alpha), allowed: intRange(LORA_ALPHA_RANGE) });
  const namesOk = l.targets.length > 0 && l.targets.every((t) => MODULE_NAME.test(t)) && new Set(l.targets).size === l.targets.length;
  if (!isAllLinear(l.targets) && !namesOk) {
    out.push({ field: 'lora.targets', value: l.targets.join(','), allowed: `${ALL_LINEAR} alone, or distinct module names such as q_proj,v_proj or c_attn` });
  }
  return out;
}
