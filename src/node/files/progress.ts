import { SingleBar } from 'cli-progress';
import { formatBytes } from '../../engine/base/index.js';

/** Files smaller than this load in well under a second: a bar would only flicker. */
const MIN_BYTES_FOR_BAR = 32 * 1024 * 1024;

export interface Progress {
  update(bytes: number): void;
  stop(): void;
}

/** A byte progress bar on stderr, only when a person is watching (a TTY) and the file is big. */
export function progressFor(file: string, total: number, enabled: boolean): Progress {
  if (!enabled || !process.stderr.isTTY || total < MIN_BYTES_FOR_BAR) return { update() {}, stop() {} };
  const bar = new SingleBar({
    stream: process.stderr,
    format: `${file} [{bar}] {percentage}% {done} / {size}`,
    hideCursor: true,
    clearOnComplete: true,
  });
  bar.start(total, 0, { done: formatBytes(0), size: formatBytes(total) });
  return {
    update: (bytes) => bar.update(Math.min(bytes, total), { done: formatBytes(bytes) }),
    stop: () => bar.stop(),
  };
}
