/**
 * `memlens view` and a headless Chromium page on it: shared by the web e2e tests and the web
 * benchmark. Lives in src/ (two levels below the repository root, as its compiled copy in dist/ is)
 * so that both the tests (from source) and `dist-tools/bench/web-bench.js` reach the same built CLI.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { NODE_FLAGS } from '../src/node/node-flags.js';
import { repoRoot } from './repo-root.js';

export const CLI = join(repoRoot(import.meta.url), 'dist', 'cli', 'main.js');

export interface RunningView {
  url: string;
  origin: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts `memlens view ARGS...` and resolves with the URL it prints. */
export function startView(...args: string[]): Promise<RunningView> {
  const child = spawn(process.execPath, [...NODE_FLAGS, CLI, 'view', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  return new Promise((resolve, reject) => {
    child.stderr!.on('data', (b: Buffer) => {
      err += b.toString();
    });
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /(http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
      if (m) resolve({ url: m[1]!, origin: new URL(m[1]!).origin, child, stop: () => stop(child) });
    });
    child.on('exit', (code) => reject(new Error(`memlens view exited with ${code}: ${err}`)));
  });
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGINT');
  });
}

export const CHROMIUM = '/usr/bin/chromium';

/**
 * Debian's headless Chromium with one page of the size the screenshots are taken at. `args` adds
 * command-line switches (the benchmark lifts the frame-rate cap so frame intervals show frame cost).
 */
export async function openBrowser(args: string[] = []): Promise<{ browser: Browser; page: Page }> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', ...args],
  });
  return { browser, page: await browser.newPage({ viewport: { width: 1400, height: 950 } }) };
}
