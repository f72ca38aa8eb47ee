import { accessSync, closeSync, constants, openSync, readSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Command } from 'commander';
import { formatBytes, formatCount, plural, SnapshotError } from '../../engine/base/index.js';
import { isDirectory } from '../../node/files/expand-paths.js';
import { EXIT_BAD_INPUT } from '../../node/files/report-error.js';
import { writeStreamAtomically } from '../../node/files/write-file.js';
import { type ReportContents, reportChunks } from '../report/report-page.js';
import { fileContents, runContents } from '../report/report-snapshots.js';
import { appTemplate } from '../report/report-template.js';
import { parseBytes } from '../text/run-files.js';

interface ReportOptions {
  output: string;
  maxBytes?: number;
  json?: boolean;
}

/** The most gzipped snapshot bytes a report carries unless --max-bytes says otherwise. */
export const DEFAULT_MAX_BYTES = 100 * 2 ** 20;

/** `memlens report`: one HTML file holding the web app and the snapshot or run, to open offline or attach. */
export function reportCommand(program: Command): void {
  program
    .command('report')
    .description(
      'write one self-contained HTML page (the web app with the snapshot or run inside) that opens offline, in Jupyter or attached to an issue',
    )
    .argument('<path>', 'a snapshot file (.pickle, .json, optionally gzipped) or a run directory')
    .requiredOption(
      '-o, --output <report.html>',
      'where to write the page (written only once complete; - for stdout)',
    )
    .option(
      '--max-bytes <size>',
      `the most snapshot (and recorded cycle) bytes the page may carry, gzipped (default ${formatBytes(DEFAULT_MAX_BYTES)}): a file over it is refused, a run's snapshots and cycles over it are listed as left out`,
      parseBytes,
    )
    .option(
      '--json',
      'print what was written as JSON: {"output", "output_bytes", "files": [...], "cycles": [...], "omitted": [...]}',
    )
    .action((path: string, opts: ReportOptions) => report(path, opts));
}

async function report(path: string, opts: ReportOptions): Promise<void> {
  let contents: ReportContents;
  let written = 0;
  try {
    checkOutput(opts.output);
    const app = appTemplate();
    const max = opts.maxBytes ?? DEFAULT_MAX_BYTES;
    contents = isDirectory(path) ? await runContents(path, max) : await fileContents(path, max);
    const title = `memlens report: ${contents.manifest.source}`;
    const produce = (write: (chunk: Uint8Array) => void) =>
      reportChunks(app, title, contents, (chunk) => {
        written += chunk.length;
        write(chunk);
      });
    if (opts.output === '-') produce((chunk) => process.stdout.write(chunk));
    else writeStreamAtomically(opts.output, produce);
    // Written with the unreadable parts named on the page and on stderr; as for `run`, not a clean exit.
    if ((contents.manifest.run?.report?.not_read.length ?? 0) > 0) process.exitCode = EXIT_BAD_INPUT;
  } catch (e) {
    process.stderr.write(`memlens: ${(e as Error).message.split('\n')[0]}\n`);
    process.exitCode = EXIT_BAD_INPUT;
    return;
  }
  if (opts.output === '-') return;
  const files = contents.snapshots.map((s) => ({
    name: s.name,
    bytes: s.size,
    embedded_bytes: s.gzipped.length,
  }));
  const cycles = contents.cycles.map((c) => ({
    name: c.name,
    bytes: c.size,
    embedded_bytes: c.gzipped.length,
  }));
  const omitted = contents.manifest.omitted;
  if (opts.json) {
    const out = { output: opts.output, output_bytes: written, files, cycles, omitted };
    process.stdout.write(`${JSON.stringify(out, null, 1)}\n`);
    return;
  }
  const lines = [`wrote ${opts.output} (${formatBytes(written)}, ${formatCount(written)} bytes)`];
  const sizes = (list: typeof files) =>
    `${formatBytes(list.reduce((t, x) => t + x.bytes, 0))}, ${formatBytes(list.reduce((t, x) => t + x.embedded_bytes, 0))} gzipped`;
  if (files.length > 0 || cycles.length === 0)
    lines.push(
      `  ${files.length === 1 ? files[0]!.name : plural(files.length, 'snapshot')}: ${sizes(files)}`,
    );
  if (cycles.length > 0) lines.push(`  ${plural(cycles.length, 'recorded cycle')}: ${sizes(cycles)}`);
  if (omitted.length > 0) {
    const count = (kind: string) => omitted.filter((o) => o.kind === kind).length;
    const what = [
      count('snapshot') > 0 ? plural(count('snapshot'), 'snapshot') : '',
      count('cycle') > 0 ? plural(count('cycle'), 'recorded cycle') : '',
    ];
    lines.push(`  left out (listed on the page): ${what.filter(Boolean).join(', ')}`);
  }
  for (const o of omitted) lines.push(`    ${o.name}: ${o.reason}`);
  process.stdout.write(`${lines.join('\n')}\n`);
}

/**
 * Before any work: the page goes where it can be written, and never over a file that is not an
 * earlier page (a snapshot named by mistake as -o would be lost). HTML to a terminal is refused.
 */
function checkOutput(out: string): void {
  if (out === '-') {
    if (process.stdout.isTTY)
      throw new SnapshotError('-o - writes HTML to stdout: redirect it to a file or a pipe');
    return;
  }
  const st = statSync(out, { throwIfNoEntry: false });
  if (st?.isDirectory()) throw new SnapshotError(`${out}: is a directory (-o names the page to write)`);
  if (st !== undefined && !startsLikeHtml(out))
    throw new SnapshotError(`${out}: exists and is not an HTML page; not overwriting it (choose another -o)`);
  try {
    accessSync(dirname(out), constants.W_OK);
  } catch (e) {
    throw new SnapshotError(`cannot write ${out} (${(e as { code?: string }).code ?? 'not writable'})`);
  }
}

function startsLikeHtml(path: string): boolean {
  const head = Buffer.alloc(64);
  let fd = -1;
  try {
    fd = openSync(path, 'r');
    const n = readSync(fd, head, 0, head.length, 0);
    return /^\s*<(!doctype html|html)/i.test(head.subarray(0, n).toString('latin1'));
  } catch {
    return false;
  } finally {
    if (fd >= 0) closeSync(fd);
  }
}
