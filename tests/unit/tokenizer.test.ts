import { describe, expect, it } from 'vitest';
import { BOS_ID, CharTokenizer, EOS_ID, leftPadBatch, PAD_ID } from '../../src/model/tokenizer.ts';
import { Rng } from '../../src/util/rng.ts';

describe('CharTokenizer', () => {
  it('reserves distinct special ids and assigns one id per deduplicated character in order', () => {
    const tok = new CharTokenizer('abcab=');
    expect(new Set([tok.padId, tok.bosId, tok.eosId]).size).toBe(3);
    expect([tok.padId, tok.bosId, tok.eosId]).toEqual([PAD_ID, BOS_ID, EOS_ID]);
    expect(tok.alphabet).toBe('abc=');
    expect(tok.vocabSize).toBe(3 + 4);
    expect(tok.encode('cab=')).toEqual([5, 3, 4, 6]);
  });

  it('round-trips random strings over the alphabet', () => {
    const alphabet = '0123456789+-= abcdefghijklmnopqrstuvwxyz.';
    const tok = new CharTokenizer(alphabet);
    const r = new Rng(7);
    for (let k = 0; k < 200; k++) {
      const len = r.int(0, 30);
      let s = '';
      for (let i = 0; i < len; i++) s += alphabet[r.int(0, alphabet.length)];
      const ids = tok.encode(s);
      expect(ids.length).toBe(len);
      for (const id of ids) expect(id).toBeGreaterThanOrEqual(3);
      for (const id of ids) expect(id).toBeLessThan(tok.vocabSize);
      expect(tok.decode(ids)).toBe(s);
      expect(tok.decode(tok.encodePrompt(s))).toBe(s);
    }
  });

  it('names the unknown character, its position and the allowed alphabet', () => {
    const tok = new CharTokenizer('abc');
    expect(() => tok.encode('abcZ')).toThrow('unknown character "Z" at position 3 (allowed: "abc")');
    expect(() => tok.encode(' ')).toThrow(/unknown character " " at position 0/);
  });

  it('rejects an empty alphabet', () => {
    expect(() => new CharTokenizer('')).toThrow(/empty/);
  });

  it('encodePrompt prepends BOS', () => {
    const tok = new CharTokenizer('ab');
    expect(tok.encodePrompt('ba')).toEqual([BOS_ID, 4, 3]);
    expect(tok.encodePrompt('')).toEqual([BOS_ID]);
  });

  it('decode skips PAD/BOS, stops at the first EOS by default, and can skip EOS instead', () => {
    const tok = new CharTokenizer('ab');
    const ids = [PAD_ID, PAD_ID, BOS_ID, 3, 4, EOS_ID, 3, PAD_ID];
    expect(tok.decode(ids)).toBe('ab');
    expect(tok.decode(ids, { stopAtEos: true })).toBe('ab');
    expect(tok.decode(ids, { stopAtEos: false })).toBe('aba');
    expect(tok.decode(Int32Array.from([3, 3, EOS_ID]))).toBe('aa');
    expect(() => tok.decode([5])).toThrow(/token id 5 is outside the vocabulary \(size 5\)/);
  });
});

describe('leftPadBatch', () => {
  it('left-pads to the longest prompt with masks and positions from the cumulative mask', () => {
    const b = leftPadBatch([[1, 5, 6], [1], [1, 7]]);
    expect(b.width).toBe(3);
    expect(b.tokens).toEqual([1, 5, 6, 0, 0, 1, 0, 1, 7]);
    expect(b.attnMask).toEqual([1, 1, 1, 0, 0, 1, 0, 1, 1]);
    expect(b.positions).toEqual([0, 1, 2, 0, 0, 0, 0, 0, 1]);
  });

  it('honours an explicit width and matches cumsum(mask) − 1 clamped at 0', () => {
    const r = new Rng(3);
    const prompts = Array.from({ length: 6 }, () => [BOS_ID, ...Array.from({ length: r.int(0, 5) }, () => r.int(3, 9))]);
    const P = 8;
    const b = leftPadBatch(prompts, P);
    expect(b.width).toBe(P);
    expect(b.tokens.length).toBe(prompts.length * P);
    for (let i = 0; i < prompts.length; i++) {
      const row = b.tokens.slice(i * P, (i + 1) * P);
      expect(row.filter((t) => t !== PAD_ID)).toEqual(prompts[i]);
      expect(row.slice(P - prompts[i].length)).toEqual(prompts[i]);
      let c = 0;
      for (let j = 0; j < P; j++) {
        c += b.attnMask[i * P + j];
        expect(b.positions[i * P + j]).toBe(Math.max(c - 1, 0));
        expect(b.attnMask[i * P + j]).toBe(j >= P - prompts[i].length ? 1 : 0);
      }
    }
  });

  it('rejects a width shorter than the longest prompt; an empty batch is empty', () => {
    expect(() => leftPadBatch([[1, 2, 3]], 2)).toThrow(/width 2 is shorter than the longest prompt \(3\)/);
    expect(leftPadBatch([])).toEqual({ tokens: [], attnMask: [], positions: [], width: 0 });
  });
});
