import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { summarize } from '../../src/engine/analyses/summary/summary.js';
import { loadSnapshotBytes } from '../../src/engine/load/load.js';

/** The real snapshots in ../shared/corpus with independently computed figures (see its README). */
const CORPUS = join(import.meta.dirname, '..', '..', '..', 'shared', 'corpus');
const files = existsSync(CORPUS) ? readdirSync(CORPUS).filter((f) => f.endsWith('.pickle')) : [];

describe.skipIf(files.length === 0)('real corpus: every expected figure matches exactly', () => {
  it('has expected figures for every corpus file', () => {
    for (const f of files) expect(existsSync(join(CORPUS, 'expected', `${f}.json`)), f).toBe(true);
  });
  for (const file of files) {
    it(file, () => {
      const expected = JSON.parse(readFileSync(join(CORPUS, 'expected', `${file}.json`), 'utf8')) as {
        devices: Record<string, unknown>[];
      };
      const summary = summarize(loadSnapshotBytes(new Uint8Array(readFileSync(join(CORPUS, file)))));
      expect(summary.devices.map((d) => d.device)).toEqual(expected.devices.map((d) => d.device));
      expected.devices.forEach((exp, i) => {
        const got = summary.devices[i] as unknown as Record<string, unknown>;
        for (const key of Object.keys(exp))
          expect(got[key], `${file} device ${String(exp.device)} ${key}`).toEqual(exp[key]);
      });
    });
  }
});
