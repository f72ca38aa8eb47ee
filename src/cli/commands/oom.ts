import type { Command } from 'commander';
import { CATEGORIES } from '../../engine/analyses/categories/index.js';
import { shellWord } from '../../engine/analyses/diagnosis/index.js';
import { listName } from '../../engine/analyses/fragmentation/index.js';
import {
  type LastStack,
  noOomEntryText,
  type OomReport,
  oomReports,
} from '../../engine/analyses/oom/index.js';
import { inProducerWords, jsonInProducerWords } from '../../engine/analyses/producer/index.js';
import { formatBytes, formatCount, formatDuration, plural } from '../../engine/base/index.js';
import { formatFrame } from '../../engine/derived/index.js';
import { deviceName } from '../../engine/model/index.js';
import { pc } from '../text/colors.js';
import { commandLines } from '../text/command-lines.js';
import { framesCell, sitesTable } from '../text/frames-text.js';
import { indent, textWidth, wrapIndented } from '../text/indent.js';
import { type FileOptions, parseBytes, parseDevice, runFiles } from '../text/run-files.js';

interface OomCliOptions extends FileOptions {
  capacity?: number;
  request?: number;
}

/** `memlens oom`: why each out-of-memory error happened, in words and arithmetic. */
export function oomCommand(program: Command): void {
  program
    .command('oom')
    .description(
      'for every oom in the trace: exhaustion, fragmentation, or memory held outside PyTorch, and what would help',
    )
    .argument('<file...>', 'snapshot files (.pickle, .json, optionally gzipped)')
    .option(
      '--capacity <size>',
      "the GPU's total memory, e.g. 80GiB (to measure memory held outside PyTorch)",
      parseBytes,
    )
    .option(
      '--request <size>',
      'with no oom in the trace: check the dump-time state against a request of this size, e.g. 2GiB',
      parseBytes,
    )
    .option('--device <n>', 'only this device', parseDevice)
    .option('--json', 'print JSON: {"files": [{"file", "devices": [{"device", "ooms": [...]}]}]}')
    .action((files: string[], opts: OomCliOptions) =>
      runFiles(files, opts, (snapshot, devices, file) => {
        const per = devices.map((d) => ({
          device: d.device,
          ooms: jsonInProducerWords(
            oomReports(snapshot, d, opts.capacity, opts.request ?? 0),
            snapshot.producer,
          ),
        }));
        return {
          json: { devices: per },
          text: per
            .map((p, k) =>
              render(
                deviceName(snapshot.producer, p.device),
                p.ooms,
                file,
                inProducerWords(noOomEntryText(snapshot, devices[k]!), snapshot.producer),
              ),
            )
            .join('\n\n'),
        };
      }),
    );
}

function render(name: string, ooms: OomReport[], file: string, noEntry: string): string {
  const lines = [pc.bold(name)];
  if (ooms.length === 0)
    lines.push(`  ${noEntry} (give --capacity, and --request, to check the dump-time state)`);
  for (const r of ooms) lines.push(...renderOne(r, file));
  return lines.join('\n');
}

/** A request with no frames (autograd's threads run no Python): where the program last was. */
function stackBefore(last: LastStack, say: (text: string, first?: string) => string[]): string[] {
  const when = last.before_us === null ? '' : `, ${formatDuration(last.before_us)} earlier`;
  return [
    ...say(
      `the failing request has no stack: the thread that asked ran no Python code, as autograd's backward threads do. The last stack before it (entry ${formatCount(last.entry)}${when}), your code first:`,
    ),
    indent(framesCell(last.stack, 6), '      '),
  ];
}

function renderOne(r: OomReport, file: string): string[] {
  const width = textWidth();
  const say = (text: string, first = '    ', rest = `${first}  `) => wrapIndented(text, width, first, rest);
  const where = r.entry < 0 ? 'dump-time state' : `oom at trace entry ${formatCount(r.entry)}`;
  const lines = [
    `  ${where}: ${pc.bold(r.verdict)}${r.exact_free_blocks ? '' : ' (free blocks estimated from the trace)'}`,
  ];
  for (const e of r.explanation) lines.push(...say(e));
  if (r.entry >= 0 && r.last_stack_before !== null) lines.push(...stackBefore(r.last_stack_before, say));
  else if (r.entry >= 0) {
    const hidden = r.stack_frames - r.stack.length - r.stack_inner.length;
    lines.push(
      ...say(
        `the failing request's stack (your code first, innermost first${hidden > 0 ? `; ${plural(hidden, 'frame')} of PyTorch's machinery left out` : ''}):`,
      ),
    );
    lines.push(indent(framesCell(r.stack, 6), '      '));
    if (r.stack_inner.length > 0)
      lines.push(
        ...say(
          `which called: ${r.stack_inner
            .slice(0, 3)
            .map((f) => formatFrame(f))
            .join(' ← ')}`,
          '      ',
        ),
      );
  }
  lines.push(...held(r, file, say, width));
  for (const g of r.free_lists)
    lines.push(
      ...say(
        `free in the ${listName(g)} list: ${formatBytes(g.free_bytes)} in ${plural(g.free_blocks, 'block')}, the largest ${formatBytes(g.largest_free_block)}${g.stream === r.stream ? " (the request's stream)" : ''}`,
      ),
    );
  if (r.suggestions.length > 0) lines.push('    would help:');
  for (const s of r.suggestions) {
    lines.push(...say(s.setting === null ? s.why : `${pc.bold(s.setting)} — ${s.why}`, '    · ', '      '));
    // The command on a line of its own, whole, to be copied as printed.
    if (s.simulate !== '')
      lines.push(
        '      test it with:',
        ...commandLines(`memlens simulate ${shellWord(file)} ${s.simulate}`, width, '        ').map(pc.dim),
      );
  }
  return lines;
}

/** What held memory at the failure: categories in one line, then the largest sites. */
function held(r: OomReport, file: string, say: (t: string) => string[], width: number): string[] {
  const h = r.held;
  if (h.live_allocations === 0) return [];
  const at = h.after_entry < 0 ? '' : ` --at ${formatCount(h.after_entry)}`;
  const cats = [...h.categories]
    .sort((a, b) => b.bytes - a.bytes || CATEGORIES.indexOf(a.category) - CATEGORIES.indexOf(b.category))
    .map((c) => `${c.category} ${formatBytes(c.bytes)}`)
    .join(', ');
  const lines = say(
    `held then: ${formatBytes(h.live_bytes)} in ${plural(h.live_allocations, 'live allocation')}; by category: ${cats}. Largest sites:`,
  );
  const rows = h.sites
    .slice(0, 3)
    .map((g) => [formatBytes(g.bytes), formatCount(g.count), framesCell(g.frames, 1)]);
  lines.push(indent(sitesTable(['bytes', 'count', 'allocated at (innermost first)'], rows), '      '));
  // A command on lines of its own (` \` continued), never wrapped inside a sentence: a path with
  // blanks broken at a blank could not be pasted.
  lines.push(
    '      all of them:',
    ...commandLines(`memlens peak ${shellWord(file)}${at}`, width, '        ').map(pc.dim),
  );
  return lines;
}
