/** A process group as `memlens record` sees it: signalled at once, and whether any of it still runs. */
import fs from 'node:fs';

/** Sends `signal` to every process of the group; false when none is left to receive it. */
export function signalGroup(group: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-group, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether a process of the group still runs. A process that has exited but was not reaped (a
 * zombie: in a container whose first process never reaps orphans, they stay) holds nothing and
 * counts as gone; where /proc cannot tell, any process that a signal would reach counts.
 */
export function groupRuns(group: number): boolean {
  if (!signalGroup(group, 0)) return false;
  let pids: string[];
  try {
    pids = fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p));
  } catch {
    return true;
  }
  return pids.some((pid) => {
    const stat = readStat(pid);
    return stat !== null && stat.group === group && stat.state !== 'Z' && stat.state !== 'X';
  });
}

/** State and process group from /proc/PID/stat (the fields after the command, which may hold spaces). */
function readStat(pid: string): { state: string; group: number } | null {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0]!, group: Number(fields[2]) };
  } catch {
    return null;
  }
}
