// The small chat model shipped with the page (`npm run pretrain -- --task chat-arithmetic` writes
// it into public/models/chat-arithmetic/): a Qwen3-architecture folder in transformers' layout,
// so the "Your own model" path works on a first visit, offline, and in every test.
export const SHIPPED_CHAT_MODEL = {
  /** The label the page shows and keeps it under. */
  label: 'chat-arithmetic',
  /** Under the page's base URL (Vite serves public/ there). */
  path: 'models/chat-arithmetic/',
  files: ['config.json', 'generation_config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json'],
  /** Bytes of the five files (tests/unit/hf_chat_pretrain.test.ts checks them on disk). */
  bytes: 512_589,
} as const;
