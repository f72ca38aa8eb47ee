/**
 * Runs the recorded command as `memlens record`'s child: the terminal's stdio is the child's,
 * `kill` reaches it through memlens too, and its end is memlens's exit code.
 *
 * The command runs in a process group (and session) of its own, so that memlens can reach every
 * process it starts (a launcher's ranks, dataloader workers) and nothing else. When memlens is
 * told to stop, it passes the signal to the whole group, waits a grace period, then kills what is
 * left, and only returns once the group is gone: on a GPU a straggler would keep holding device
 * memory, and run.json must not be written while a rank still writes snapshots.
 */
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { groupRuns, signalGroup } from './process-group.js';

export interface ChildEnd {
  /** The command's exit code, or 128 + n when signal n ended it (as a shell reports it). */
  code: number;
  /** The signal that ended it, if one did. */
  signal: NodeJS.Signals | null;
}

export interface ChildOptions {
  /** Seconds the group has to end after SIGTERM or SIGHUP before it is killed. */
  graceSeconds: number;
}

/**
 * Signals passed on to the command's group. Its own session has no terminal, so Ctrl+C and a
 * closed terminal reach memlens alone, and memlens passes them on, once.
 */
const FORWARDED: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** Signals that ask the program to stop: after the grace period, the group is killed. */
const STOPPING: NodeJS.Signals[] = ['SIGTERM', 'SIGHUP'];

/** How long to wait for a killed group's last process to be gone (one stuck in the kernel). */
const KILLED_WAIT_MS = 5000;
const POLL_MS = 50;

/** Shell conventions for a command that could not be started. */
const NOT_FOUND = 127;
const NOT_EXECUTABLE = 126;

export function runChild(command: string[], env: NodeJS.ProcessEnv, opts: ChildOptions): Promise<ChildEnd> {
  return new Promise((resolve) => {
    const child = spawn(command[0]!, command.slice(1), { stdio: 'inherit', env, detached: true });
    const group = child.pid;
    let stopping = false;
    let killer: NodeJS.Timeout | undefined;
    let killedAt: number | undefined;
    const forward = (signal: NodeJS.Signals) => {
      if (group === undefined || !signalGroup(group, signal)) return;
      if (!STOPPING.includes(signal) || stopping) return;
      stopping = true;
      killer = setTimeout(() => {
        killedAt = Date.now();
        signalGroup(group, 'SIGKILL');
      }, opts.graceSeconds * 1000);
    };
    /** While the grace period runs, as long as it takes; once killed, at most KILLED_WAIT_MS more. */
    const groupGone = async (g: number) => {
      while (groupRuns(g) && (killedAt === undefined || Date.now() - killedAt < KILLED_WAIT_MS))
        await new Promise((r) => setTimeout(r, POLL_MS));
    };
    for (const s of FORWARDED) process.on(s, forward);
    let settled = false;
    const done = async (end: ChildEnd) => {
      if (settled) return; // a failed start may report both 'error' and 'exit'
      settled = true;
      // Told to stop: the rest of the group gets its grace period too, then is killed.
      if (stopping && group !== undefined) await groupGone(group);
      clearTimeout(killer);
      for (const s of FORWARDED) process.off(s, forward);
      resolve(end);
    };
    child.on('error', (e: NodeJS.ErrnoException) => {
      const why =
        e.code === 'ENOENT' ? 'command not found' : e.code === 'EACCES' ? 'permission denied' : e.message;
      process.stderr.write(`memlens record: ${command[0]}: ${why}\n`);
      void done({ code: e.code === 'ENOENT' ? NOT_FOUND : NOT_EXECUTABLE, signal: null });
    });
    child.on('exit', (code, signal) => {
      if (signal !== null) void done({ code: 128 + (constants.signals[signal] ?? 0), signal });
      else void done({ code: code ?? 0, signal: null });
    });
  });
}
