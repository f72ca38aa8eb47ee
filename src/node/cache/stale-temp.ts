/** How old a temporary file must be to be removed even if a process with its pid runs (pids are reused). */
const MAX_TEMP_AGE_MS = 60 * 60 * 1000;

/**
 * Whether a cache's temporary file or folder (`….<pid>.tmp`, `….memlens-<pid>.tmp`) was left by a
 * process that is gone: a full disk or a kill leaves them, and nothing else would remove them. One
 * whose writer still runs is kept (it is being written now), unless it is older than an hour.
 */
export function isStaleTemp(name: string, mtimeMs: number, now = Date.now()): boolean {
  const pid = /[.-](\d+)\.tmp$/.exec(name)?.[1];
  if (pid === undefined) return false;
  return now - mtimeMs > MAX_TEMP_AGE_MS || !isRunning(Number(pid));
}

function isRunning(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
