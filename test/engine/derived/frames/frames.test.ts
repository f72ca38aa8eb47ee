import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateSnapshotBytes, generateSnapshotJson } from '../../../../scripts/synth/index.js';
import { diffSnapshots } from '../../../../src/engine/analyses/diff/diff.js';
import { peakOf } from '../../../../src/engine/analyses/peak/peak.js';
import { allocationDetails } from '../../../../src/engine/derived/allocation/allocation-details.js';
import { frameKind, HIDDEN_KINDS, isUserCode } from '../../../../src/engine/derived/frames/frame-kinds.js';
import { formatFrame, shortName, shortPath } from '../../../../src/engine/derived/frames/short-path.js';
import {
  cellFrames,
  shownFrames,
  topUserFrame,
  userFirstStack,
} from '../../../../src/engine/derived/frames/user-frames.js';
import { loadSnapshotBytes } from '../../../../src/engine/load/load.js';
import type { Snapshot } from '../../../../src/engine/model/snapshot.js';
import { blockTable } from '../../../../src/engine/views/tables/tables.js';
import { NODE_FLAGS } from '../../../../src/node/node-flags.js';
import { windowsPaths } from '../../../helpers/windows-paths.js';

const CORPUS = join(import.meta.dirname, '..', '..', '..', '..', '..', 'shared', 'corpus');
const CLI = join(import.meta.dirname, '..', '..', '..', '..', 'dist', 'cli', 'main.js');
const tmp = mkdtempSync(join(tmpdir(), 'memlens-frames-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const GiB = 2 ** 30;

/** Every stack of a snapshot, as frames. */
function stacksOf(s: Snapshot) {
  return Array.from({ length: s.stacks.stackCount }, (_, i) => s.stacks.frames(i));
}

// The generator records stacks as stacks="all" does: recorder, allocator, dispatcher and
// interpreter frames around the Python ones; backward allocations have no Python frame at all.
const generated = loadSnapshotBytes(generateSnapshotBytes({ events: 4000, seed: 91 }).bytes);

describe('the frame filter on recorded stacks', () => {
  it('a pinned allocation lists the user frame first, the machinery hidden (details panel)', () => {
    const d = generated.devices[0]!;
    let checked = 0;
    for (let id = 0; id < d.allocations.count; id++) {
      const frames = generated.stacks.frames(d.allocations.stack[id]!);
      if (!frames.some(isUserCode)) continue;
      const details = allocationDetails(generated, d, id);
      expect(details.frames[0]!.user, `allocation ${id}`).toBe(true);
      const { filename, line, name } = frames.find(isUserCode)!;
      expect(details.frames[0]).toMatchObject({ filename, line, name });
      expect(details.frames.concat(details.inner_frames).some((f) => HIDDEN_KINDS.has(f.kind))).toBe(false);
      expect(details.full_frames.map((f) => f.name)).toEqual(frames.map((f) => f.name));
      expect(details.frames.length + details.inner_frames.length + details.hidden_frames).toBe(frames.length);
      checked++;
    }
    expect(checked).toBeGreaterThan(100);
  });

  it('a stack without Python frames is named by its operator or autograd node, never the allocator', () => {
    const backward = stacksOf(generated).filter(
      (f) => f.length > 0 && !f.some((x) => x.filename.endsWith('.py')),
    );
    expect(backward.length).toBeGreaterThan(0);
    for (const frames of backward) {
      const top = topUserFrame(frames)!;
      expect(frameKind(top), top.name).toBe('native');
      expect(top.name).not.toMatch(/CUDACachingAllocator|unwind|_ops::|VariableType|empty_cuda/);
    }
    // The Blocks table's frame column reads the same frame.
    const d = generated.devices[0]!;
    const t = blockTable(generated, d);
    const frameColumn = t.columns.indexOf('frame');
    for (let i = 0; i < t.length; i++)
      expect(String(t.cell(i, frameColumn))).not.toMatch(/CUDACachingAllocator/);
  });

  it('full stacks keep every frame; the headline frame is still the user one', () => {
    for (const frames of stacksOf(generated)) {
      expect(shownFrames(frames, { full: true })).toEqual(frames);
      const top = topUserFrame(frames);
      if (!frames.some(isUserCode)) continue;
      expect(isUserCode(top!)).toBe(true);
      // A table cell of a whole stack leads with the user's frame, and counts the rest.
      const cell = cellFrames(frames, 4);
      expect(cell.frames[0]).toMatchObject({ name: top!.name, filename: top!.filename, line: top!.line });
      expect(cell.frames.length + cell.more).toBe(frames.length);
    }
  });

  it('kinds: recorder, allocator, dispatcher, interpreter, native, library, user', () => {
    const f = (name: string, filename = '??') => ({ name, filename, line: 0 });
    expect(frameKind(f('torch::unwind::unwind()'))).toBe('recorder');
    expect(frameKind(f('torch::CapturedTraceback::gather(bool, bool, bool)'))).toBe('recorder');
    expect(
      frameKind(
        f('c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::malloc(void**, signed char)', ''),
      ),
    ).toBe('allocator');
    expect(frameKind(f('at::detail::empty_cuda(c10::ArrayRef<long>, c10::TensorOptions const&)'))).toBe(
      'allocator',
    );
    expect(frameKind(f('at::_ops::mul_Tensor::call(at::Tensor const&, at::Tensor const&)'))).toBe(
      'dispatcher',
    );
    expect(frameKind(f('c10::impl::wrap_kernel_functor_unboxed_<...>::call()', 'RegisterCUDA_0.cpp'))).toBe(
      'dispatcher',
    );
    expect(
      frameKind(
        f('torch::autograd::VariableType::(anonymous namespace)::mul_Tensor()', 'VariableType_0.cpp'),
      ),
    ).toBe('dispatcher');
    expect(frameKind(f('torch::autograd::Engine::thread_main(std::shared_ptr<GraphTask> const&)'))).toBe(
      'dispatcher',
    );
    expect(frameKind(f('_PyEval_EvalFrameDefault'))).toBe('interpreter');
    expect(frameKind(f('PyObject_Call'))).toBe('interpreter');
    expect(frameKind(f('method_vectorcall_VARARGS', 'Objects/descrobject.c'))).toBe('interpreter');
    expect(frameKind(f('__libc_start_main'))).toBe('interpreter');
    expect(frameKind(f('at::native::addmm_out_cuda(at::Tensor const&)'))).toBe('native');
    expect(frameKind(f('torch::autograd::generated::MulBackward0::apply()', 'Functions.cpp'))).toBe('native');
    expect(
      frameKind(f('forward', '/home/u/.venv/lib/python3.11/site-packages/torch/nn/modules/linear.py')),
    ).toBe('library');
    expect(frameKind(f('<module>', '/home/u/proj/lib/train.py'))).toBe('user');
    expect(frameKind(f('_find_and_load', '<frozen importlib._bootstrap>'))).toBe('library');
    // memlens record's helper frees the garbage a collection saved (--cycles): its frames are the
    // recorder's; a user's own package that happens to be called memlens stays the user's.
    const helper = f('run_followup', '/usr/lib/node_modules/memlens/python/memlens/cycles.py');
    expect([frameKind(helper), isUserCode(helper)]).toEqual(['recorder', false]);
    expect(frameKind(f('_cut', 'C:\\tools\\memlens\\python\\memlens\\_record.py'))).toBe('recorder');
    expect(frameKind(f('find', '/home/u/proj/memlens/cycles.py'))).toBe('user');
  });
});

describe('Windows paths', () => {
  it('libraries are told apart with backslashes and drive letters', () => {
    const lib = [
      'C:\\research\\DeComFL\\.venv\\lib\\site-packages\\torch\\nn\\modules\\module.py',
      'D:\\Dev\\proj\\.venv\\Lib\\site-packages\\einops\\einops.py',
      'C:\\Python311\\Lib\\json\\decoder.py',
      'C:\\Users\\me\\miniconda3\\envs\\x\\Lib\\dist-packages\\foo\\bar.py',
    ];
    for (const filename of lib) expect(isUserCode({ filename, line: 1, name: 'f' }), filename).toBe(false);
    const user = ['C:\\research\\DeComFL\\cezo_fl\\client.py', 'D:\\Dev\\proj\\cs336_basics\\model.py'];
    for (const filename of user) expect(isUserCode({ filename, line: 1, name: 'f' }), filename).toBe(true);
  });

  it('paths shorten to what tells files apart, in either separator', () => {
    expect(shortPath('C:\\research\\DeComFL\\.venv\\lib\\site-packages\\torch\\nn\\modules\\module.py')).toBe(
      'torch\\…\\modules\\module.py',
    );
    expect(shortPath('/home/u/.venv/lib/python3.11/site-packages/torch/functional.py')).toBe(
      'torch/functional.py',
    );
    expect(shortPath('C:\\research\\DeComFL\\cezo_fl\\client.py')).toBe('…\\cezo_fl\\client.py');
    expect(shortPath('/home/alice/nanogpt/model.py')).toBe('…/nanogpt/model.py');
    expect(shortPath('model.py')).toBe('model.py');
    expect(formatFrame({ name: 'at::native::mul()', filename: '??', line: 0 })).toBe('at::native::mul()');
    expect(
      shortName('at::Tensor at::_sum_to<c10::SymInt>(at::Tensor, c10::ArrayRef<c10::SymInt>, bool)'),
    ).toBe('at::_sum_to<c10::SymInt>(…)');
    expect(
      shortName(
        'void torch::autograd::AccumulateGrad::accumulateGrad<std::function<void (at::Tensor&&)> >(at::Tensor const&)',
      ),
    ).toBe('torch::autograd::AccumulateGrad::accumulateGrad<…>(…)');
    expect(shortName('c10::TensorImpl::~TensorImpl() [clone .localalias]')).toBe(
      'c10::TensorImpl::~TensorImpl()',
    );
    expect(shortName('torch::cuda::(anonymous namespace)::gather_with_cpp()')).toBe(
      'torch::cuda::(anonymous namespace)::gather_with_cpp()',
    );
    for (const python of ['<module>', '<listcomp>', 'forward']) expect(shortName(python)).toBe(python);
  });

  // The generator's run with its paths as a Windows machine records them.
  const file = join(tmp, 'windows.json');
  writeFileSync(file, windowsPaths(generateSnapshotJson({ events: 3000, seed: 17 }).json));
  const s = loadSnapshotBytes(new Uint8Array(readFileSync(file)));

  it("the peak's top site is the user's frame, not torch's", () => {
    const p = peakOf(s, s.devices[0]!, { top: 5 });
    const top = p.groups[0]!.frames;
    expect(top[0]!.filename).toMatch(/^C:\\.*\\(model|train)\.py$/);
    for (const g of p.groups) expect(g.frames.some((f) => /site-packages/.test(f.filename))).toBe(false);
  });

  it('memlens peak (text and --json) leads with the user frame and short paths', () => {
    const run = (args: string[]) =>
      spawnSync(process.execPath, [...NODE_FLAGS, CLI, ...args], { encoding: 'utf8' });
    const json = run(['peak', file, '--json', '--top', '3']);
    expect(json.status, json.stderr).toBe(0);
    const dev = JSON.parse(json.stdout).files[0].devices[0];
    expect(dev.groups[0].frames[0].filename).toMatch(/\\(model|train)\.py$/);
    const text = run(['peak', file, '--top', '3']);
    expect(text.status).toBe(0);
    const firstSite = text.stdout.split('\n').find((l) => /│ +\d.*%/.test(l))!;
    expect(firstSite).toMatch(/\((…\\[^\\]+\\)?(model|train)\.py:\d+\)/);
    expect(text.stdout).not.toMatch(/site-packages/);
    expect(Math.max(...text.stdout.split('\n').map((l) => l.length))).toBeLessThan(120);
  });
});

describe('compare headline', () => {
  const a = loadSnapshotBytes(generateSnapshotBytes({ events: 4000, seed: 71, streams: 1 }).bytes);
  const b = loadSnapshotBytes(
    generateSnapshotBytes({ events: 4000, seed: 71, streams: 1, extraBuffer: 2 * GiB }).bytes,
  );

  it('full stacks: the headline names the user frame, not the recorder', () => {
    for (const fullStacks of [false, true]) {
      const [d] = diffSnapshots(a, b, a.devices, b.devices, { fullStacks }).devices;
      expect(d!.explanation[1], `fullStacks ${fullStacks}`).toMatch(/more in B from allocate_rank_buffer \(/);
      expect(d!.explanation.join('\n')).not.toMatch(/unwind|\?\?:0/);
    }
  });

  it('default compare: every site is named by a user or operator frame, never the allocator', () => {
    // Another run (another seed): its backward sites hold other bytes at its peak.
    const c = loadSnapshotBytes(generateSnapshotBytes({ events: 6000, seed: 5, streams: 1 }).bytes);
    const [d] = diffSnapshots(a, c, a.devices, c.devices, { top: 1000 }).devices;
    const sites = [...d!.at_dump.sites, ...d!.at_peak.sites];
    expect(sites.some((x) => !x.frames.some(isUserCode))).toBe(true); // backward sites are among them
    for (const site of sites)
      expect(HIDDEN_KINDS.has(frameKind(site.frames[0]!)), site.frames[0]!.name).toBe(false);
  });
});

describe.skipIf(!existsSync(CORPUS))('Windows paths in the corpus', () => {
  it('DeComFL: model.to() weights are reset_model (client.py), not torch convert (module.py)', () => {
    const s = loadSnapshotBytes(
      new Uint8Array(readFileSync(join(CORPUS, 'ZidongLiu_DeComFL__memory__edd30e0.pickle'))),
    );
    const p = peakOf(s, s.devices[0]!, { top: 100 });
    for (const g of p.groups)
      expect(
        g.frames.some((f) => f.filename.includes('site-packages')),
        g.frames[0]?.name,
      ).toBe(false);
    expect(
      p.groups.some(
        (g) => g.frames[0]!.name === 'reset_model' && g.frames[0]!.filename.endsWith('\\client.py'),
      ),
    ).toBe(true);
  });

  it('every corpus stack with user code starts at it in the user-first view', () => {
    for (const name of [
      'Wedsonlin_assignment2__results_medium_128_training_memory_snapshot__87b0864.pickle',
    ]) {
      const s = loadSnapshotBytes(new Uint8Array(readFileSync(join(CORPUS, name))));
      for (const frames of stacksOf(s)) {
        const shown = userFirstStack(frames);
        if (frames.some(isUserCode)) expect(shown.frames[0]!.kind).toBe('user');
        else expect(shown.frames.every((f) => !HIDDEN_KINDS.has(f.kind))).toBe(true);
      }
    }
  });
});
