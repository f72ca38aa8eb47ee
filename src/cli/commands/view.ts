import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { plural } from '../../engine/base/index.js';
import { gatherCycleInputs } from '../../node/cycles/cycle-inputs.js';
import { isDirectory } from '../../node/files/expand-paths.js';
import { EXIT_BAD_INPUT } from '../../node/files/report-error.js';
import type { RunScan } from '../../node/files/scan-run.js';
import { CycleService } from '../../server/cycle-service.js';
import { RunService } from '../../server/run-service.js';
import { startServer } from '../../server/serve.js';
import { collectFiles, type ServedFile } from '../../server/snapshot-files.js';
import { APP_ROOT } from '../../server/static-files.js';
import { parseCount } from '../text/run-files.js';

interface ViewOptions {
  port?: number;
  open?: boolean;
  json?: boolean;
  watch?: boolean;
}

/** `memlens view`: the web app on 127.0.0.1 with only the named snapshot files. */
export function viewCommand(program: Command): void {
  program
    .command('view')
    .description('open snapshots in the memlens web app, served on 127.0.0.1 (files or run directories)')
    .argument(
      '<path...>',
      'snapshot files, or directories like <save_path>/step<N>/torch_memory_rank<R>_pid<P>.pickle',
    )
    .option('--port <n>', 'port to listen on (default: a free one)', parseCount)
    .option('--open', 'open the page in the default browser')
    .option('--json', 'print where it serves as one JSON line: {"url", "files": [...]}')
    .option('--watch', 'keep reading the run directories: snapshots written later join the Run page')
    .action((paths: string[], opts: ViewOptions) => view(paths, opts));
}

/** A directory with recorded cycles (memlens record --cycles) and no snapshot, by its scan. */
function onlyCycles(p: string, scan: RunScan): boolean {
  return scan.files.length === 0 && gatherCycleInputs([p]).cycles.length > 0;
}

async function view(paths: string[], opts: ViewOptions): Promise<void> {
  if (!existsSync(join(APP_ROOT, 'index.html'))) {
    process.stderr.write('memlens: the web app is not built (run npm run build)\n');
    process.exitCode = EXIT_BAD_INPUT;
    return;
  }
  const dirs = paths.filter(isDirectory);
  // Each directory is read once here: what is checked below is what start then decodes.
  const run =
    dirs.length > 0
      ? new RunService(
          dirs,
          paths.filter((p) => !dirs.includes(p)),
          [],
        )
      : undefined;
  let files: ServedFile[];
  try {
    // Files named on their own are checked here (one line naming a missing one); a directory is a run.
    // A run recorded without a GPU holds only its reference cycles: its page is their Cycles tab.
    files = await collectFiles(
      paths.filter((p) => !(run && dirs.includes(p) && onlyCycles(p, run.firstScan(p)))),
      run && ((dir) => run.firstScan(dir)),
    );
    if (run) files = run.files;
  } catch (e) {
    process.stderr.write(`memlens: ${(e as Error).message}\n`);
    process.exitCode = EXIT_BAD_INPUT;
    return;
  }
  // Decoded while the server answers: the page shows the progress, then the run.
  run
    ?.start()
    .then(() => opts.watch && run?.watch())
    .catch((e: Error) => process.stderr.write(`memlens: ${e.message}\n`));
  const cycles = run === undefined ? undefined : new CycleService(dirs, files);
  const { server, url } = await startServer(files, APP_ROOT, opts.port, run, cycles);
  process.stdout.write(
    opts.json
      ? `${JSON.stringify({ url, files: files.map(({ name, label, path, size }) => ({ name, label, path, size })) })}\n`
      : `memlens: ${plural(files.length, 'snapshot file')} at ${url}  (Ctrl+C to stop)\n`,
  );
  if (opts.open) openBrowser(url);
  // The command lasts as long as the server: main exits once this promise settles.
  await new Promise<void>((resolve) => {
    const stop = () => {
      run?.close();
      server.close(() => resolve());
      server.closeAllConnections();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

function openBrowser(url: string): void {
  const cmd = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  spawn(cmd, [url], { stdio: 'ignore', detached: true })
    .on('error', () => process.stderr.write(`memlens: could not open a browser; visit ${url}\n`))
    .unref();
}
