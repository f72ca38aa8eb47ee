/**
 * Worker thread of `memlens diff`: decodes one file with the engine and posts back its half of
 * the diff (diff-side.ts), so the two files of a diff decode on two cores at once.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { diffSide } from '../../engine/analyses/diff/index.js';
import { SnapshotError } from '../../engine/base/index.js';
import { openSnapshot } from '../files/open-snapshot.js';
import type { SideReply, SideRequest } from './parallel-decode.js';

const PROGRESS_EVERY = 16 * 1024 * 1024;

async function main(req: SideRequest): Promise<SideReply> {
  try {
    let reported = 0;
    const snapshot = await openSnapshot(req.file, {
      progress: false,
      onProgress: (bytes) => {
        if (bytes - reported < PROGRESS_EVERY) return;
        reported = bytes;
        parentPort!.postMessage({ progress: bytes } satisfies SideReply);
      },
    });
    const devices =
      req.device === undefined ? snapshot.devices : snapshot.devices.filter((d) => d.device === req.device);
    if (devices.length === 0) throw new SnapshotError(`has no device ${req.device}`);
    return { side: diffSide(snapshot, devices, req.fullStacks) };
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) };
  }
}

parentPort!.postMessage(await main(workerData as SideRequest));
