/**
 * Every command's words on torch_npu files (scripts/synth/npu.ts): the NPU's, never CUDA's,
 * devices named npu:N, no warning the producer did not earn, and the OOM verdicts.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type NpuOptions, npuSnapshotBytes } from '../../scripts/synth/npu.js';
import { NODE_FLAGS } from '../../src/node/node-flags.js';
import { inShell, memlensOnPath, printedCommands } from '../helpers/printed-commands.js';

const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli', 'main.js');
const tmp = mkdtempSync(join(tmpdir(), 'memlens-npu-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function write(name: string, o: NpuOptions): string {
  const file = join(tmp, name);
  writeFileSync(file, npuSnapshotBytes(o).bytes);
  return file;
}

const FILES = {
  // torch_npu names its OOM dumps oom_snapshot_<pid>_<time>.pickle (OptionsManager.cpp, oom_observer).
  state: write('oom_snapshot_4242_20261128061500.pickle', { oom: 'state-only' }),
  cann: write('cann.pickle', { oom: 'cann' }),
  allocator: write('allocator.pickle', { oom: 'allocator', device: 1 }),
  expandable: write('expandable.pickle', { expandable: true }),
};

/** Words that are CUDA's or PyTorch-version guesses, wrong for a torch_npu file. */
const CUDA_ONLY =
  /\bCUDA\b|cuda[A-Z]\w*|\bGPUs?\b|nvidia-smi|\bNCCL\b|cuBLAS|memory_viz|PyTorch [<≥>]|older than 2\.3|cuda:\d|device \d/;

function memlens(...args: string[]) {
  return atWidth(100, ...args);
}

function atWidth(width: number, ...args: string[]) {
  return spawnSync(process.execPath, [...NODE_FLAGS, CLI, ...args], {
    encoding: 'utf8',
    env: { ...process.env, MEMLENS_WIDTH: String(width) },
  });
}

describe('memlens on torch_npu files', () => {
  for (const command of ['summary', 'diagnose', 'oom', 'frag', 'simulate']) {
    it(`${command}: the NPU's words, npu:N, exit 0 and no warning`, () => {
      for (const [kind, file] of Object.entries(FILES)) {
        const r = memlens(command, file);
        expect(r.status, `${kind}: ${r.stderr}`).toBe(0);
        expect(r.stderr, kind).toBe('');
        // The file's own name is data; the report is what must speak the NPU's words.
        const text = r.stdout.replace(file, '');
        expect(text, `${command} ${kind}`).not.toMatch(CUDA_ONLY);
        expect(text, kind).toMatch(kind === 'allocator' ? /^npu:1$/m : /^npu:0$/m);
        expect(text, kind).not.toMatch(/warning|impossible|inconsistent|does not know/i);
      }
    });
  }

  it('summary --json names the producer, what decided it, and the device label', () => {
    const r = memlens('summary', '--json', FILES.cann);
    const f = JSON.parse(r.stdout).files[0];
    expect(f.producer.kind).toBe('torch_npu');
    expect(f.producer.signals.length).toBeGreaterThan(0);
    expect(f.devices[0].label).toBe('npu:0');
    expect(f.devices[0].workspace_bytes).toBe(6 * 2 ** 20);
    expect(f.warnings).toEqual([]);
  });

  it("oom: a CANN OOM leaves no entry, said as such; with --request the file's stream decides", () => {
    const plain = memlens('oom', FILES.cann);
    expect(plain.stdout).toMatch(/no oom entry in the trace's 53 entries; .*CANN leaves none/s);
    expect(plain.stdout).not.toMatch(/no OOM/);
    const fits = memlens('oom', FILES.cann, '--capacity', '100MiB', '--request', '35MiB', '--json');
    const r = JSON.parse(fits.stdout).files[0].devices[0].ooms[0];
    expect(r.verdict).toBe('would fit');
    expect(r.stream).toBe(0xaaab_1c2d_3e40);
  });

  it("a refusal about a torch_npu file is in the NPU's words too", () => {
    const r = memlens('oom', FILES.allocator, '--capacity', '100MiB');
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/npu:1 had at the oom .*\(reserved \+ CANN free\): give the NPU's total memory/);
  });

  it('oom: the state-only dump is judged from its oom entry', () => {
    const r = memlens('oom', FILES.state, '--capacity', '512MiB', '--json');
    const [o] = JSON.parse(r.stdout).files[0].devices[0].ooms;
    expect(o.verdict).toBe('exhaustion');
    expect(o.stack[0].name).toBe('forward');
  });

  it("the commands it prints keep the file's path as written, CUDA's words and all, and run", () => {
    const dir = join(tmp, 'GPU runs', 'CUDA', 'device 3');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'oom.pickle');
    copyFileSync(FILES.allocator, file);
    const { echo, real } = memlensOnPath(tmp);
    const text = atWidth(60, 'diagnose', file).stdout;
    const json = JSON.parse(memlens('diagnose', '--json', file).stdout).files[0];
    const oom = printedCommands(atWidth(60, 'oom', file).stdout);
    // The largest sites' command too, on lines of its own: inside a sentence it broke at a blank.
    expect(oom.some((c) => c.startsWith('memlens peak'))).toBe(true);
    const commands = [
      ...printedCommands(text),
      ...json.devices.flatMap((d: { findings: { command: string }[] }) => d.findings.map((f) => f.command)),
      ...oom,
    ];
    expect(commands.length).toBeGreaterThanOrEqual(7);
    // Wrapped at 60 columns: the path is a line of its own, continued.
    expect(commands.some((c) => c.includes('\n'))).toBe(true);
    for (const command of commands) {
      const argv = inShell(echo, command).stdout.split('\0');
      expect(argv, command).toContain(file);
      const r = inShell(real, command);
      expect(r.status, `${command}\n${r.stderr}`).toBe(0);
    }
  }, 120_000);
});
