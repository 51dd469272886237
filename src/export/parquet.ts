// JobRow[] → a Parquet file (hyparquet-writer), with an explicit schema so the nested columns are
// the standard shapes pandas / pyarrow / HF datasets read: prompt = list<struct<role, content>>,
// reward_model and extra_info = structs.
import { parquetWriteBuffer } from 'hyparquet-writer';
import type { JobRow } from './dataset.ts';

type Leaf = { name: string; type: 'BYTE_ARRAY' | 'INT64'; converted_type?: 'UTF8'; repetition_type: 'REQUIRED' };
const str = (name: string): Leaf => ({ name, type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' });

const SCHEMA = [
  { name: 'root', num_children: 6 },
  str('data_source'),
  // 3-level list: prompt (LIST) → list (repeated) → element (struct of role, content)
  { name: 'prompt', repetition_type: 'REQUIRED', converted_type: 'LIST', num_children: 1 },
  { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
  { name: 'element', repetition_type: 'REQUIRED', num_children: 2 },
  str('role'),
  str('content'),
  str('ability'),
  { name: 'reward_model', repetition_type: 'REQUIRED', num_children: 2 },
  str('style'),
  str('ground_truth'),
  { name: 'extra_info', repetition_type: 'REQUIRED', num_children: 3 },
  str('split'),
  { name: 'index', type: 'INT64', repetition_type: 'REQUIRED' },
  str('playground_prompt'),
  str('label'),
] as const;

export function rowsToParquet(rows: JobRow[]): Uint8Array {
  if (rows.length === 0) throw new Error('rowsToParquet: no rows to write');
  const buffer = parquetWriteBuffer({
    columnData: [
      { name: 'data_source', data: rows.map((r) => r.data_source) },
      { name: 'prompt', data: rows.map((r) => r.prompt.map((m) => ({ role: m.role, content: m.content }))) },
      { name: 'ability', data: rows.map((r) => r.ability) },
      { name: 'reward_model', data: rows.map((r) => ({ style: r.reward_model.style, ground_truth: r.reward_model.ground_truth })) },
      {
        name: 'extra_info',
        data: rows.map((r) => ({ split: r.extra_info.split, index: BigInt(r.extra_info.index), playground_prompt: r.extra_info.playground_prompt })),
      },
      { name: 'label', data: rows.map((r) => r.label) },
    ],
    schema: SCHEMA.map((s) => ({ ...s })),
    createdBy: 'ppo-playground export-job (hyparquet-writer)',
  });
  return new Uint8Array(buffer);
}
