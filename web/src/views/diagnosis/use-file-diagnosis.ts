import type { WindowCycle } from '../../../../src/engine/analyses/cycles/index.js';
import type { DiagnosisSoFar } from '../../../../src/engine/analyses/diagnosis/index.js';
import type { EngineClient } from '../../worker/client.js';
import { diagnosisArgs } from './diagnosis-page.js';
import { nothingFound, problemsOf } from './other-devices.js';
import { useDiagnosis } from './use-diagnosis.js';

/** The open file's diagnosis (every device), for the page's landing and the device picker. */
export type FileAnswer = { file: string; result: DiagnosisSoFar | null };

/**
 * The file's diagnosis when `file` is set (with the arguments the Diagnosis page uses, so the
 * worker computes it once): null until its first findings, `result` null when it failed.
 */
export function useFileDiagnosis(
  client: EngineClient,
  file: string | null,
  cycles: WindowCycle[],
): FileAnswer | null {
  const answer = useDiagnosis(client, file === null ? null : diagnosisArgs(file, cycles));
  if (file === null || answer.status === 'loading') return null;
  return { file, result: answer.status === 'ready' ? answer.value : null };
}

/**
 * The device a file of several lands on: that of its worst finding, once no analysis still
 * running can outrank it (the page must not move under the user); the first device when nothing
 * ranks or the diagnosis failed; undefined while it is not known yet.
 */
export function landingDevice(r: DiagnosisSoFar | null, devices: number[]): number | null | undefined {
  if (r !== null && !r.leadKnown) return undefined;
  return r?.order[0]?.device ?? devices[0] ?? null;
}

/** How the device picker names each device: its label, and whether anything was found there. */
export function deviceNames(r: DiagnosisSoFar | null): Map<number, string> {
  const names = new Map<number, string>();
  for (const d of r?.devices ?? []) {
    const n = problemsOf(d).length;
    const none = nothingFound(r);
    names.set(d.device, `${d.label} — ${n === 0 ? none : n === 1 ? '1 problem' : `${n} problems`}`);
  }
  return names;
}
