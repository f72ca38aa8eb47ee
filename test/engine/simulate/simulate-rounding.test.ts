import { describe, expect, it } from 'vitest';
import { allocationSize, roundSize } from '../../../src/engine/simulate/rounding.js';
import { applyConf, defaultSettings, parseDivisions } from '../../../src/engine/simulate/settings.js';

const MiB = 1024 * 1024;
const withConf = (conf: string, version = '2.6') => applyConf(defaultSettings(version), conf);

/** The test vectors of allocator-spec.md, Appendix A. */
describe('simulate: request rounding (allocator-spec §2, Appendix A)', () => {
  it('rounds to 512-byte multiples by default', () => {
    const s = defaultSettings();
    const cases: [number, number][] = [
      [1, 512],
      [511, 512],
      [512, 512],
      [513, 1024],
      [1000, 1024],
      [1048576, 1048576],
      [1048577, 1049088],
    ];
    for (const [req, want] of cases) expect(roundSize(req, s), String(req)).toBe(want);
  });

  it('roundup_power2_divisions:4 and :8 round to power-of-two divisions above 512 × divisions', () => {
    const four = withConf('roundup_power2_divisions:4');
    expect(roundSize(1200, four)).toBe(1536); // the guard size > 512·4 fails: plain rounding
    expect(roundSize(3000, four)).toBe(3072);
    expect(roundSize(5_000_000, four)).toBe(5_242_880);
    expect(roundSize(1_500_000, withConf('roundup_power2_divisions:8'))).toBe(1_572_864);
  });

  it('the list form follows test_cuda.py: 84 MiB → 88 MiB, 400 MiB → 512 MiB', () => {
    const s = withConf('roundup_power2_divisions:[64:8,128:2,256:2,512:2,1024:1,>:1]');
    expect(roundSize(88_080_384, s)).toBe(92_274_688);
    expect(roundSize(419_430_400, s)).toBe(536_870_912);
  });

  it('`>` overwrites the last explicit interval up to 2.10, not in 2.11', () => {
    const v = '[256:1,512:2,1024:4,>:8]';
    expect(parseDivisions(v, true)).toEqual([1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 8, 8, 8, 8, 8, 8]);
    expect(parseDivisions(v, false)).toEqual([1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 4, 8, 8, 8, 8, 8]);
    expect(withConf(`roundup_power2_divisions:${v}`, '2.11').divisions[10]).toBe(4);
  });

  it('up to 2.3 a divisions entry of 1 left sizes unrounded', () => {
    expect(roundSize(5000, withConf('roundup_power2_divisions:1', '2.3'))).toBe(5000);
    expect(roundSize(5000, withConf('roundup_power2_divisions:1', '2.6'))).toBe(5120);
  });

  it('sizes new segments: 2 MiB small, 20 MiB mid, else 2 MiB multiples', () => {
    const s = defaultSettings();
    const cases: [number, number][] = [
      [1024, 2 * MiB],
      [MiB, 2 * MiB],
      [MiB + 512, 20 * MiB],
      [5 * MiB, 20 * MiB],
      [10 * MiB - 512, 20 * MiB],
      [10 * MiB, 10 * MiB],
      [25 * MiB, 26 * MiB],
      [250 * MiB + 512, 252 * MiB],
    ];
    for (const [size, want] of cases) expect(allocationSize(size, s), String(size)).toBe(want);
  });

  it('rejects settings PyTorch rejects', () => {
    expect(() => withConf('max_split_size_mb:20')).toThrow(/max_split_size_mb/);
    expect(() => withConf('roundup_power2_divisions:3')).toThrow(/power of two/);
    expect(() => withConf('garbage_collection_threshold:1.5')).toThrow(/garbage_collection_threshold/);
    expect(() => withConf('large_segment_size_mb:32', '2.6')).toThrow(/2.11/);
    expect(() => withConf('no_such_key:1')).toThrow(/unknown allocator setting/);
  });
});
