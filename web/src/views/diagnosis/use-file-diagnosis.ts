import { useEffect, useState } from 'react';
import type { WindowCycle } from '../../../../src/engine/analyses/cycles/index.js';
import type { FileDiagnosis } from '../../../../src/engine/analyses/diagnosis/index.js';
import type { EngineClient } from '../../worker/client.js';
import { diagnosisArgs } from './diagnosis-page.js';
import { problemsOf } from './other-devices.js';

/** The open file's diagnosis (every device), for the page's landing and the device picker. */
export type FileAnswer = { file: string; result: FileDiagnosis | null };

/**
 * Asks the worker for the file's diagnosis when `file` is set (with the arguments the Diagnosis
 * page uses, so it is computed once); null until it answers, `result` null when it failed.
 */
export function useFileDiagnosis(
  client: EngineClient,
  file: string | null,
  cycles: WindowCycle[],
): FileAnswer | null {
  const [answer, setAnswer] = useState<FileAnswer | null>(null);
  useEffect(() => {
    setAnswer(null);
    if (file === null) return;
    let live = true;
    client.query('diagnosis', diagnosisArgs(file, cycles)).then(
      (result) => live && setAnswer({ file, result }),
      () => live && setAnswer({ file, result: null }),
    );
    return () => {
      live = false;
    };
  }, [client, file, cycles]);
  return answer;
}

/** The device of the file's worst finding (the first device when nothing ranks). */
export function landingDevice(r: FileDiagnosis | null, devices: number[]): number | null {
  return r?.order[0]?.device ?? devices[0] ?? null;
}

/** How the device picker names each device: its label, and whether anything was found there. */
export function deviceNames(r: FileDiagnosis | null): Map<number, string> {
  const names = new Map<number, string>();
  for (const d of r?.devices ?? []) {
    const n = problemsOf(d).length;
    names.set(
      d.device,
      `${d.label} — ${n === 0 ? 'nothing found' : n === 1 ? '1 problem' : `${n} problems`}`,
    );
  }
  return names;
}
