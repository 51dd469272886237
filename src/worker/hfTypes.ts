// What the page and the worker say about a Hugging Face model the visitor opened: plain,
// structured-clonable records (the page never sees the model's classes).

/** The opened model, as the page shows it and seeds the sampling settings from. */
export interface HfModelSummary {
  label: string;
  /** config.json's architectures[0], e.g. "Qwen3ForCausalLM". */
  architecture: string;
  nLayer: number;
  dModel: number;
  nHead: number;
  nKvHead: number;
  vocab: number;
  maxPositions: number;
  parameters: number;
  /** Bytes the weights take on the device, as uploaded. */
  deviceBytes: number;
  /** Dtype of the weights on the device. */
  weightDtype: 'f16' | 'f32';
  hasChatTemplate: boolean;
  /** Sampling defaults from generation_config.json (or config.json when the folder has none). */
  generation: { source: string; doSample: boolean; temperature: number; topP: number; topK: number; maxNewTokens: number | null; eosTokenIds: number[] };
}

/** One prompt to sample a response for. */
export interface HfGenerateRequest {
  prompt: string;
  /** Through the chat template as one user turn with the generation prompt. */
  chat: boolean;
  greedy: boolean;
  temperature: number;
  topP: number;
  maxNewTokens: number;
  seed: number;
}

export interface HfSampleToken {
  id: number;
  /** The token as text (byte-level pieces decoded). */
  text: string;
  /** log p of this token under the distribution it was drawn from (0 for greedy). */
  logprob: number;
  special: boolean;
}

export interface HfSample {
  promptIds: number[];
  /** The prompt as the model saw it (the chat template rendered when on). */
  promptText: string;
  /** Characters of the typed prompt the tokenizer has no token for (left out of what the model read); absent when none. */
  unknownChars?: string[];
  tokens: HfSampleToken[];
  /** The response decoded, special tokens left out. */
  text: string;
  stopped: 'eos' | 'max_new_tokens';
  /** Drawn greedily: the log-probs are 0 and say nothing. */
  greedy: boolean;
  seconds: number;
}
