import { spawn } from 'node:child_process';

/**
 * Removes `path` if this process dies before calling the function returned: Ctrl+C (SIGINT),
 * SIGTERM, SIGHUP, and equally SIGKILL, the OOM killer or a crash.
 *
 * Why a watchdog process and not process.on('SIGINT'): the writers are synchronous (the pickle
 * writer hands its chunks to writeSync), and Node runs a JavaScript signal handler only when the
 * event loop gets control back, which is after the whole file has been written and renamed; a
 * handler would turn Ctrl+C into "wait for the write to finish, then keep the output". The
 * watchdog is a shell in a session of its own (Ctrl+C in the terminal signals the foreground
 * process group, not it) blocked reading a pipe from this process. The pipe reaches end-of-file
 * when this process closes it or dies, however it dies; the shell then removes the path. After a
 * successful rename nothing is left under that name and `rm -f` does nothing. This process keeps
 * the default action of every signal, so it dies of it and the shell reports 130, 143 or 129.
 */
export function removeIfInterrupted(path: string): () => void {
  if (process.platform === 'win32') return () => {};
  try {
    const watchdog = spawn('/bin/sh', ['-c', 'read -r _; rm -f -- "$1"', 'memlens-cleanup', path], {
      stdio: ['pipe', 'ignore', 'ignore'],
      detached: true,
    });
    // No watchdog (no /bin/sh, no processes left) only loses the clean-up, never the write.
    watchdog.on('error', () => {});
    watchdog.stdin!.on('error', () => {});
    watchdog.unref();
    return () => watchdog.stdin!.end();
  } catch {
    return () => {};
  }
}
