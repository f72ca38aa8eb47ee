import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { startServer } from '../../server/serve.js';
import { collectFiles } from '../../server/snapshot-files.js';
import { APP_ROOT } from '../../server/static-files.js';
import { EXIT_BAD_INPUT, parseCount } from '../run-files.js';

interface ViewOptions {
  port?: number;
  open?: boolean;
  json?: boolean;
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
    .action((paths: string[], opts: ViewOptions) => view(paths, opts));
}

async function view(paths: string[], opts: ViewOptions): Promise<void> {
  if (!existsSync(join(APP_ROOT, 'index.html'))) {
    process.stderr.write('memlens: the web app is not built (run npm run build)\n');
    process.exitCode = EXIT_BAD_INPUT;
    return;
  }
  let files: Awaited<ReturnType<typeof collectFiles>>;
  try {
    files = await collectFiles(paths);
  } catch (e) {
    process.stderr.write(`memlens: ${(e as Error).message}\n`);
    process.exitCode = EXIT_BAD_INPUT;
    return;
  }
  const { server, url } = await startServer(files, APP_ROOT, opts.port);
  process.stdout.write(
    opts.json
      ? `${JSON.stringify({ url, files })}\n`
      : `memlens: ${files.length} snapshot file(s) at ${url}  (Ctrl+C to stop)\n`,
  );
  if (opts.open) openBrowser(url);
  // The command lasts as long as the server: main exits once this promise settles.
  await new Promise<void>((resolve) => {
    const stop = () => {
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
