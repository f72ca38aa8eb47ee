import { describe, expect, it } from 'vitest';
import { parseByteText, parseCountText } from '../../../src/engine/base/units.js';

describe('figures typed back as memlens prints them', () => {
  it('reads counts with thousands separators', () => {
    expect(parseCountText('20,047')).toBe(20047);
    expect(parseCountText('20047')).toBe(20047);
    expect(parseCountText('1_000')).toBe(1000);
    expect(parseCountText('20,04')).toBeNull();
    expect(parseCountText('-1')).toBeNull();
    expect(parseCountText('1.5')).toBeNull();
  });
  it('reads sizes with units, binary and decimal as written', () => {
    expect(parseByteText('80GiB')).toBe(80 * 1024 ** 3);
    expect(parseByteText('80 GB')).toBe(80e9);
    expect(parseByteText('1.5GiB')).toBe(1.5 * 1024 ** 3);
    expect(parseByteText('512m')).toBe(512 * 1024 ** 2);
    expect(parseByteText('4096')).toBe(4096);
    expect(parseByteText('4,096 B')).toBe(4096);
    expect(parseByteText('1.5')).toBeNull();
    expect(parseByteText('80 GiBs')).toBeNull();
    expect(parseByteText('')).toBeNull();
  });
});
