/**
 * `memlens view DIR` reads the run's directory once at start (it was read three times: to see
 * whether it held only cycles, to list its files, and to decode them), and `--watch` opens a JSON
 * file again only when its stat changed (every JSON file was sniffed again on every poll). The
 * scan and the sniff are wrapped (vi.mock) to count their calls; all else is the real code.
 */
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { generateSnapshotBytes } from '../../scripts/synth/generate.js';

const seen = vi.hoisted(() => {
  const { mkdtempSync, writeFileSync } = require('node:fs') as typeof import('node:fs');
  const { join } = require('node:path') as typeof import('node:path');
  const { tmpdir } = require('node:os') as typeof import('node:os');
  const app = mkdtempSync(join(tmpdir(), 'memlens-view-app-'));
  writeFileSync(join(app, 'index.html'), '<!doctype html>');
  return { scans: new Map<string, number>(), sniffs: new Map<string, number>(), app };
});

const count = (m: Map<string, number>, key: string) => m.set(key, (m.get(key) ?? 0) + 1);

vi.mock('../../src/node/files/scan-run.js', async (original) => {
  const real = await original<typeof import('../../src/node/files/scan-run.js')>();
  return {
    ...real,
    scanRun: (root: string, ...rest: never[]) => {
      count(seen.scans, root);
      return real.scanRun(root, ...rest);
    },
  };
});

vi.mock('../../src/node/files/sniff-snapshot.js', async (original) => {
  const real = await original<typeof import('../../src/node/files/sniff-snapshot.js')>();
  return {
    ...real,
    notSnapshotReason: (file: string) => {
      count(seen.sniffs, file);
      return real.notSnapshotReason(file);
    },
  };
});

// The web app's files are not what is tested: a page of one line stands for the built app.
vi.mock('../../src/server/static-files.js', async (original) => ({
  ...(await original<typeof import('../../src/server/static-files.js')>()),
  APP_ROOT: seen.app,
}));

const { viewCommand } = await import('../../src/cli/commands/view.js');
const { RunService } = await import('../../src/server/run-service.js');

const work = mkdtempSync(join(tmpdir(), 'memlens-view-scans-'));
process.env.XDG_CACHE_HOME = join(work, 'cache');
afterAll(() => {
  rmSync(work, { recursive: true, force: true });
  rmSync(seen.app, { recursive: true, force: true });
});

/** A run of one snapshot (decoded on this thread: no worker pool) and a JSON file that is not one. */
function writeRun(name: string): { root: string; config: string } {
  const root = join(work, name);
  mkdirSync(join(root, 'step1'), { recursive: true });
  writeFileSync(
    join(root, 'step1', 'torch_memory_rank0_pid1.pickle'),
    generateSnapshotBytes({ events: 300, seed: 1 }).bytes,
  );
  const config = join(root, 'training_config.json');
  writeFileSync(config, JSON.stringify({ lr: 0.001, steps: 10 }));
  return { root, config };
}

const until = async (done: () => boolean) => {
  for (let i = 0; i < 500 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
};

describe('memlens view DIR', () => {
  it('reads the run directory once at start', async () => {
    const { root, config } = writeRun('once');
    const program = new Command().exitOverride();
    viewCommand(program);
    const listening = process.listeners('SIGINT');
    let printed = '';
    const write = vi.spyOn(process.stdout, 'write').mockImplementation((text) => {
      printed += String(text);
      return true;
    });
    try {
      const served = program.parseAsync(['view', root, '--json', '--port', '0'], { from: 'user' });
      await until(() => printed.includes('\n'));
      expect(JSON.parse(printed).files).toHaveLength(1);
      // Stopped as Ctrl+C stops it.
      for (const stop of process.listeners('SIGINT').filter((l) => !listening.includes(l))) stop('SIGINT');
      await served;
    } finally {
      write.mockRestore();
    }
    expect(seen.scans.get(root)).toBe(1);
    expect(seen.sniffs.get(config)).toBe(1);
  });
});

describe('memlens view DIR --watch', () => {
  it('opens a JSON file again only once its stat changed', async () => {
    const { root, config } = writeRun('watched');
    const run = new RunService([root], [], []);
    await run.start();
    run.watch(10);
    try {
      await until(() => (seen.scans.get(root) ?? 0) >= 8);
      expect(seen.sniffs.get(config)).toBe(1);
      utimesSync(config, 1e9, 1e9);
      const polls = seen.scans.get(root)!;
      await until(() => seen.scans.get(root)! >= polls + 4);
      expect(seen.sniffs.get(config)).toBe(2);
    } finally {
      run.close();
    }
  });
});
