import { describe, expect, it } from 'vitest';
import { decodePickle } from '../../../src/engine/decode/unpickler.js';
import { PickledCall, PickledExternal, PickledGlobal } from '../../../src/engine/values/py-values.js';
import { matchesCanonical } from '../../helpers/canonical.js';
import {
  EDGE_PROTOCOLS,
  edgeCases,
  readEdgeExpected,
  readEdgeFile,
  readEdgePickle,
  readHostile,
} from '../../helpers/edge-fixtures.js';

/** Golden values written by CPython (fixtures/edge/make_edge.py), every protocol 0-5. */
describe('decoder against CPython-written pickles', () => {
  for (const name of edgeCases()) {
    for (const protocol of EDGE_PROTOCOLS) {
      it(`${name} protocol ${protocol}`, () => {
        const { value, inert } = decodePickle(readEdgePickle(name, protocol));
        expect(matchesCanonical(value, readEdgeExpected(name))).toBeNull();
        expect(inert.count).toBe(0);
      });
    }
  }

  it('keeps shared objects shared (memo identity)', () => {
    for (const protocol of [2, 4, 5]) {
      const { value } = decodePickle(readEdgePickle('self_ref_list', protocol));
      const list = value as unknown[];
      expect(list.includes(list)).toBe(true);
    }
  });
});

describe('pickles that would run code decode to inert placeholders', () => {
  const hostile = readHostile();
  for (const [file, info] of Object.entries(hostile)) {
    it(file, () => {
      const { value, inert } = decodePickle(readEdgeFile(file));
      const expectedInert = info.globals.length + (info.persistent_ids?.length ?? 0);
      expect(inert.count).toBeGreaterThanOrEqual(Math.min(1, expectedInert));
      const all = JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? String(v) : v));
      expect(all).not.toContain('pwned-ran');
      if (info.calls.length > 0) {
        expect(value).toBeInstanceOf(PickledCall);
        const call = value as PickledCall;
        expect(call.callable).toBeInstanceOf(PickledGlobal);
        expect(String(call.callable)).toBe(`${info.calls[0]![0]}.${info.calls[0]![1]}`);
      }
      if (info.persistent_ids) {
        const weight = (value as Record<string, unknown>).weight;
        expect(weight).toBeInstanceOf(PickledExternal);
      }
    });
  }
});
