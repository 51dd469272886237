import { describe, expect, it } from 'vitest';
import { buildSftBatch } from '../../src/model/sft.ts';
import { BOS_ID, CharTokenizer, EOS_ID, PAD_ID } from '../../src/model/tokenizer.ts';

describe('SFT batches', () => {
  it('left-pads whole sequences and scores only response tokens and the EOS', () => {
    const tok = new CharTokenizer('0123456789+=');
    const b = buildSftBatch(tok, [
      { prompt: '1+2=', response: '3' },
      { prompt: '9=', response: '12' },
    ]);
    const d = (s: string) => tok.encode(s);
    expect(b.S).toBe(7); // BOS 1+2= 3 EOS
    expect(Array.from(b.tokens)).toEqual([BOS_ID, ...d('1+2=3'), EOS_ID, PAD_ID, BOS_ID, ...d('9=12'), EOS_ID]);
    expect(Array.from(b.attnMask)).toEqual([1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1]);
    expect(Array.from(b.positions)).toEqual([0, 1, 2, 3, 4, 5, 6, 0, 0, 1, 2, 3, 4, 5]);
    // logits at t score token t+1 (S − 1 = 6 per row)
    expect(Array.from(b.targets)).toEqual([...d('1+2=3'), EOS_ID, BOS_ID, ...d('9=12'), EOS_ID]);
    expect(Array.from(b.lossMask)).toEqual([0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 1, 1]);
  });
});
