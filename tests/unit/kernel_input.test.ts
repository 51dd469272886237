import { describe, expect, it } from 'vitest';
import { denseArray, InputError, maskField, nest, numberField, choiceField } from '../../src/ops/kernelInput.ts';

describe('kernel CLI input validation', () => {
  it('parses rectangular arrays with their shape', () => {
    const d = denseArray(
      {
        x: [
          [1, 2, 3],
          [4, 5, 6],
        ],
      },
      'x',
      2,
    );
    expect(d.shape).toEqual([2, 3]);
    expect(Array.from(d.data)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(nest(d.data, d.shape)).toEqual([
      [1, 2, 3],
      [4, 5, 6],
    ]);
  });
  it.each([
    [{}, 'missing field "x"'],
    [{ x: [[1, 2], [3]] }, 'field "x"[1]: ragged array'],
    [{ x: [[1, 'a']] }, 'field "x"[0][1]: expected a number'],
    [{ x: [1, 2] }, 'field "x"[0]: expected an array'],
    [{ x: [[1, null]] }, 'field "x"[0][1]: expected a number, got null'],
    [{ x: 'nope' }, 'field "x": expected an array'],
  ])('rejects %j naming the field', (input, message) => {
    expect(() => denseArray(input as Record<string, unknown>, 'x', 2)).toThrow(InputError);
    expect(() => denseArray(input as Record<string, unknown>, 'x', 2)).toThrow(message);
  });
  it('rejects non-integers where integers are required', () => {
    expect(() => denseArray({ t: [[1.5]] }, 't', 2, { integer: true })).toThrow('field "t"[0][0]: expected an integer');
  });
  it('checks masks hold 0/1 and match the shape', () => {
    expect(() => maskField({ mask: [[1, 2]] }, 'mask', [1, 2], 'x')).toThrow('a mask holds 0 or 1');
    expect(() => maskField({ mask: [[1]] }, 'mask', [1, 2], 'x')).toThrow('does not match "x"');
    expect(Array.from(maskField({ mask: [[true, false]] }, 'mask', [1, 2], 'x').data)).toEqual([1, 0]);
  });
  it('checks numbers and choices', () => {
    expect(() => numberField({ beta: -1 }, 'beta', { min: 0 })).toThrow('field "beta": -1 is out of range');
    expect(() => numberField({ beta: '1' }, 'beta')).toThrow('expected a finite number');
    expect(numberField({}, 'clip_c', { optional: true })).toBeNull();
    expect(() => choiceField({ e: 'k9' }, 'e', ['k1', 'k3'])).toThrow('field "e": the string "k9" is not one of k1, k3');
  });
});
