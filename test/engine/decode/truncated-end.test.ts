import { describe, expect, it } from 'vitest';
import { Unpickler } from '../../../src/engine/decode/unpickler.js';

/** The error a pickle cut short gives, fed whole or one byte at a time (the same either way). */
function errorOf(bytes: number[], byteByByte: boolean): string {
  const vm = new Unpickler(16, false);
  const input = Uint8Array.from(bytes);
  try {
    if (byteByByte) for (let i = 0; i < input.length; i++) vm.push(input.subarray(i, i + 1));
    else vm.push(input);
    vm.finish();
  } catch (e) {
    return (e as Error).message;
  }
  return 'no error';
}

// The last bytes of an input are decoded apart from the rest (the decoder's loop reads ahead):
// an opcode whose fixed part or payload is cut off is named, at its own offset.
describe('a pickle cut short at its end', () => {
  const cases: [string, number[], string][] = [
    [
      'BININT1 without its byte',
      [0x80, 4, 0x4b],
      "truncated pickle: 0x4b 'K' runs past the end of the input (at byte 2)",
    ],
    [
      'LONG_BINGET with 2 of 4 bytes',
      [0x80, 4, 0x6a, 1, 0],
      "truncated pickle: 0x6a 'j' runs past the end of the input (at byte 2)",
    ],
    [
      'FRAME with 3 of 8 bytes',
      [0x80, 4, 0x95, 1, 0, 0],
      'truncated pickle: 0x95 runs past the end of the input (at byte 2)',
    ],
    [
      'a str without all of its text',
      [0x80, 4, 0x8c, 5, 0x61, 0x62],
      'truncated pickle: 0x8c runs past the end of the input (at byte 2)',
    ],
    ['no STOP after a whole value', [0x80, 4, 0x4b, 1], 'truncated pickle: no STOP opcode (at byte 4)'],
    ['an unknown opcode at the end', [0x80, 4, 0x4b, 1, 0xff], 'unknown opcode 0xff (at byte 4)'],
  ];
  for (const [name, bytes, message] of cases) {
    it(name, () => {
      expect(errorOf(bytes, false)).toBe(message);
      expect(errorOf(bytes, true)).toBe(message);
    });
  }

  it('still decodes a whole pickle whose last opcodes sit in the tail', () => {
    const vm = new Unpickler(16, false);
    vm.push(Uint8Array.from([0x80, 4, 0x95, 4, 0, 0, 0, 0, 0, 0, 0, 0x4b, 7, 0x2e]));
    expect(vm.finish().root).toBe(7);
  });
});
