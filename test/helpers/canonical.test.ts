import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { canonicalize, matchesCanonical, toJsValue } from './canonical.js';
import { EDGE_DIR, EDGE_PROTOCOLS, edgeCases, readEdgeExpected, readHostile } from './edge-fixtures.js';

/** null-prototype object with the given entries, like the decoder builds for a dict */
function dict(entries: [string, unknown][]): Record<string, unknown> {
  const o = Object.create(null) as Record<string, unknown>;
  for (const [k, v] of entries) o[k] = v;
  return o;
}

const tuple = (...items: unknown[]) => Object.freeze(items);
const int = (s: string | number) => ({ int: String(s) });
const str = (s: string) => ({ str: s });

describe('matchesCanonical', () => {
  it('accepts a matching nested value', () => {
    const value = dict([
      ['a', [1, 1.5, 2n ** 64n, 'x', null, true]],
      ['t', tuple(new Uint8Array([1, 255]), new Set([3, 'z']))],
    ]);
    const expected = {
      dict: [
        [str('a'), { list: [int(1), { float: 1.5 }, int('18446744073709551616'), str('x'), null, true] }],
        [str('t'), { tuple: [{ bytes: '01ff' }, { frozenset: [int(3), str('z')] }] }],
      ],
    };
    expect(matchesCanonical(value, expected)).toBeNull();
  });

  it('reports a wrong int with its path', () => {
    const m = matchesCanonical([1, [2, 3]], { list: [int(1), { list: [int(2), int(4)] }] });
    expect(m).toBe('$[1][1]: expected int 4, got 3');
  });

  it('reports float vs int', () => {
    expect(matchesCanonical([1.5], { list: [int(1)] })).toBe('$[0]: expected int 1, got float 1.5');
    expect(matchesCanonical(3n ** 40n, { float: 1.5 })).toMatch(/^\$: expected float 1\.5, got bigint/);
    expect(matchesCanonical(-0, int(0))).toMatch(/expected int 0, got -0/);
  });

  it('insists on number vs bigint at the 2^53 boundary', () => {
    expect(matchesCanonical(2 ** 53 - 1, int('9007199254740991'))).toBeNull();
    expect(matchesCanonical(2n ** 53n, int('9007199254740992'))).toBeNull();
    expect(matchesCanonical(2 ** 53, int('9007199254740992'))).toMatch(/as a bigint/);
    expect(matchesCanonical(5n, int(5))).toMatch(/as a number/);
  });

  it('distinguishes -0.0, nan and infinities', () => {
    expect(matchesCanonical(-0, { float: '-0.0' })).toBeNull();
    expect(matchesCanonical(0, { float: '-0.0' })).toBe('$: expected float -0.0, got 0');
    expect(matchesCanonical(-0, { float: 0.0 })).toBe('$: expected float 0, got -0.0');
    expect(matchesCanonical(Number.NaN, { float: 'nan' })).toBeNull();
    expect(matchesCanonical(Number.NEGATIVE_INFINITY, { float: '-inf' })).toBeNull();
    expect(matchesCanonical(Number.POSITIVE_INFINITY, { float: 'nan' })).not.toBeNull();
  });

  it('reports a missing key, an extra key and a non-null prototype', () => {
    const expected = {
      dict: [
        [str('a'), int(1)],
        [str('b'), int(2)],
      ],
    };
    expect(matchesCanonical(dict([['a', 1]]), expected)).toBe('$: missing key "b"');
    expect(
      matchesCanonical(
        dict([
          ['a', 1],
          ['b', 2],
          ['c', 3],
        ]),
        expected,
      ),
    ).toBe('$: unexpected key "c"');
    expect(matchesCanonical({ a: 1, b: 2 }, expected)).toMatch(
      /expected dict .* got object with prototype Object/,
    );
    expect(matchesCanonical(new Map([['a', 1]]), expected)).toMatch(/got Map\(1\)/);
  });

  it('reports wrong key order', () => {
    const expected = {
      dict: [
        [str('a'), int(1)],
        [str('b'), int(2)],
      ],
    };
    expect(
      matchesCanonical(
        dict([
          ['b', 2],
          ['a', 1],
        ]),
        expected,
      ),
    ).toBe('$: key order differs at position 0: expected "a", got "b"');
  });

  it('expects JS property order for index-like keys (it cannot keep Python insertion order)', () => {
    const expected = {
      dict: [
        [str('b'), int(1)],
        [int(10), int(2)],
        [str('2'), int(3)],
      ],
    };
    const value = dict([
      ['b', 1],
      ['10', 2],
      ['2', 3],
    ]);
    expect(Object.keys(value)).toEqual(['2', '10', 'b']);
    expect(matchesCanonical(value, expected)).toBeNull();
  });

  it('reports tuple vs list in both directions', () => {
    expect(matchesCanonical([1, 2], { tuple: [int(1), int(2)] })).toBe(
      '$: expected tuple (frozen array) of length 2, got list (array, length 2)',
    );
    expect(matchesCanonical(tuple(1, 2), { list: [int(1), int(2)] })).toBe(
      '$: expected list (unfrozen array) of length 2, got tuple (frozen array, length 2)',
    );
    expect(matchesCanonical(tuple(), { tuple: [] })).toBeNull();
    expect(matchesCanonical([], { tuple: [] })).not.toBeNull();
  });

  it('reports wrong lengths, strings and bytes', () => {
    expect(matchesCanonical([1], { list: [int(1), int(2)] })).toBe(
      '$: expected list of length 2, got length 1',
    );
    expect(matchesCanonical('abd', str('abc'))).toMatch(/first difference at UTF-16 index 2/);
    expect(matchesCanonical(new Uint8Array([1, 2, 4]), { bytes: '010203' })).toBe(
      '$: bytes differ at index 2: expected 0x03, got 0x04',
    );
    expect(matchesCanonical(new Uint8Array([1]), { bytearray: '01' })).toBeNull();
    expect(matchesCanonical([1], { bytes: '01' })).toMatch(/expected bytes of 1, got list/);
  });

  it('compares sets without regard to order', () => {
    const expected = { set: [int(1), int(2), str('1')] };
    expect(matchesCanonical(new Set(['1', 2, 1]), expected)).toBeNull();
    expect(matchesCanonical(new Set([1, 2, 3]), expected)).toMatch(
      /no element of the Set matches expected set element \{"str":"1"\}/,
    );
    expect(matchesCanonical(new Set([1, 2]), expected)).toMatch(/expected set of size 3, got Set of size 2/);
    expect(matchesCanonical([1, 2, '1'], expected)).toMatch(/a Set\), got list/);
  });

  it('checks that {"ref": "self"} is the very same object', () => {
    const expected = { list: [int(1), { ref: 'self' }] };
    const l: unknown[] = [1];
    l.push(l);
    expect(matchesCanonical(l, expected)).toBeNull();
    expect(matchesCanonical([1, [1]], expected)).toMatch(
      /^\$\[1\]: expected a reference to the enclosing container itself/,
    );
  });

  it('reports None and bool mismatches', () => {
    expect(matchesCanonical(undefined, null)).toBe('$: expected None (null), got undefined');
    expect(matchesCanonical(1, true)).toBe('$: expected true (boolean), got number 1');
  });

  it('reports malformed expected JSON instead of matching it', () => {
    expect(matchesCanonical(1, { integer: '1' })).toMatch(/invalid canonical node/);
  });
});

describe('canonicalize', () => {
  it('uses the hint to tell int from float, bytes from bytearray, set from frozenset', () => {
    const value = [1, 1, new Uint8Array([0]), new Set([2]), -0];
    expect(canonicalize(value)).toEqual({
      list: [int(1), int(1), { bytes: '00' }, { set: [int(2)] }, { float: '-0.0' }],
    });
    const hint = {
      list: [int(1), { float: 1.0 }, { bytearray: '00' }, { frozenset: [int(2)] }, { float: '-0.0' }],
    };
    expect(canonicalize(value, hint)).toEqual(hint);
  });

  it('gives a diffable structure for a mismatch', () => {
    const hint = { dict: [[int(7), { float: 2.5 }]] };
    expect(
      canonicalize(
        dict([
          ['7', 2.5],
          ['x', 1n],
        ]),
        hint,
      ),
    ).toEqual({
      dict: [
        [int(7), { float: 2.5 }],
        [str('x'), int(1)],
      ],
    });
  });

  it('marks values outside the model', () => {
    expect(canonicalize([undefined, {}])).toEqual({
      list: [{ unknown: 'undefined' }, { unknown: 'object with prototype Object' }],
    });
  });
});

describe('fixtures/edge', () => {
  const cases = edgeCases();

  it('has the expected cases, each pickled at protocols 0..5', () => {
    expect(cases.length).toBeGreaterThanOrEqual(17);
    for (const name of cases) {
      for (const p of EDGE_PROTOCOLS) expect(existsSync(`${EDGE_DIR}${name}_p${p}.pickle`)).toBe(true);
    }
    for (const f of Object.keys(readHostile())) expect(existsSync(`${EDGE_DIR}${f}`)).toBe(true);
  });

  // The matcher agrees with the JS value the model implies, and canonicalize round-trips it.
  it.each(cases)('%s: toJsValue(expected) matches and canonicalizes back', (name) => {
    const expected = readEdgeExpected(name);
    const value = toJsValue(expected);
    expect(matchesCanonical(value, expected)).toBeNull();
    expect(canonicalize(value, expected)).toEqual(expected);
  });

  it('dict_key_order: the decoded object must list keys in JS property order', () => {
    const value = toJsValue(readEdgeExpected('dict_key_order')) as Record<string, unknown>;
    expect(Object.keys(value)).toEqual([
      '2',
      '7',
      '10',
      '4294967294',
      'b',
      'a',
      '-1',
      '4294967295',
      '01',
      '1.5',
      'None',
      'True',
      '(1, 2)',
      '1152921504606846976',
      'z',
    ]);
  });
});
