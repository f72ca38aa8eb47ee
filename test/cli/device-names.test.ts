/**
 * One name per device in every command: `cuda:N` in a PyTorch file, `npu:N` in a torch_npu file,
 * in each device's text header and in every JSON `label` (deviceName, src/engine/model/producer.ts).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../scripts/synth/index.js';
import { npuSnapshotBytes } from '../../scripts/synth/npu.js';
import { NODE_FLAGS } from '../../src/node/node-flags.js';

const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli', 'main.js');
const tmp = mkdtempSync(join(tmpdir(), 'memlens-names-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const cuda = join(tmp, 'cuda.pickle');
writeFileSync(cuda, generateSnapshotBytes({ events: 3000, seed: 3, devices: 2 }).bytes);
const npu = join(tmp, 'npu.pickle');
writeFileSync(npu, npuSnapshotBytes({ oom: 'allocator', device: 1 }).bytes);

function memlens(...args: string[]): string {
  const r = spawnSync(process.execPath, [...NODE_FLAGS, CLI, ...args], { encoding: 'utf8' });
  expect(r.status, `${args.join(' ')}: ${r.stderr}`).toBe(0);
  return r.stdout;
}

/** Each command whose text report has one header line per device. */
const PER_DEVICE = ['summary', 'oom', 'frag', 'simulate', 'peak', 'leaks', 'gc', 'categories'];

const FILES = [
  { file: cuda, names: ['cuda:0', 'cuda:1'] },
  { file: npu, names: ['npu:1'] },
];

describe('device names', () => {
  for (const { file, names } of FILES) {
    const kind = names[0]!.split(':')[0];
    it(`${kind}: every command heads each device with its name, never "device N"`, () => {
      for (const command of PER_DEVICE) {
        const text = memlens(command, file).replace(file, '');
        const headers = text.split('\n').filter((l) => /^(cuda|npu):\d+$/.test(l));
        expect(headers, command).toEqual(names);
        expect(text, command).not.toMatch(/^device \d/m);
      }
    });

    it(`${kind}: JSON labels are the same names (summary, diagnose, diff)`, () => {
      const summary = JSON.parse(memlens('summary', '--json', file)).files[0];
      expect(summary.devices.map((d: { label: string }) => d.label)).toEqual(names);
      const diagnosis = JSON.parse(memlens('diagnose', '--json', file)).files[0];
      expect(diagnosis.devices.map((d: { label: string }) => d.label)).toEqual(names);
      const diff = JSON.parse(memlens('diff', file, file, '--json'));
      expect(diff.devices.map((d: { label: string }) => d.label)).toEqual(names);
      expect(diff.devices.map((d: { label_b: string }) => d.label_b)).toEqual(names);
      const text = memlens('diff', file, file);
      expect(text.split('\n').filter((l) => /^(cuda|npu):\d+$/.test(l))).toEqual(names);
    });
  }
});
