import type {
  DeviceDiagnosis,
  DiagnosisSoFar,
  FileDiagnosis,
} from '../../../../src/engine/analyses/diagnosis/index.js';

/** A finding that is a problem, not the peak's context or what the file cannot tell. */
export function problemsOf(d: DeviceDiagnosis): DeviceDiagnosis['findings'] {
  return d.findings.filter((f) => f.severity !== 'context' && f.severity !== 'note');
}

/** "nothing found", said only once every analysis has answered: until then it is "nothing found yet". */
export function nothingFound(r: DiagnosisSoFar | null): string {
  return r !== null && r.pending.length > 0 ? 'nothing found yet' : 'nothing found';
}

/**
 * The file's other devices, in the order of their worst finding: each with its worst problem and
 * a link to it, or that nothing was found there. On a device with no problem, it comes first, so
 * a clean device never hides the one that has one.
 */
export function OtherDevices({
  file,
  device,
  onDevice,
}: {
  file: DiagnosisSoFar;
  device: number;
  onDevice: (device: number) => void;
}) {
  const others = worstFirst(file).filter((d) => d.device !== device);
  if (others.length === 0) return null;
  return (
    <section className="other-devices" aria-label="other devices">
      <h2>The file's other devices</h2>
      <ul>
        {others.map((d) => {
          const [worst] = problemsOf(d);
          return (
            <li key={d.device} className={worst ? 'has-findings' : 'clean'}>
              <button type="button" className="link" onClick={() => onDevice(d.device)}>
                {d.label}
              </button>
              {worst
                ? `: ${problemsOf(d).length === 1 ? '1 problem' : `${problemsOf(d).length} problems`} — ${worst.headline}`
                : `: ${nothingFound(file)}`}
            </li>
          );
        })}
      </ul>
    </section>
  );
}

/** The devices in the order of their first finding in the file's ranking. */
export function worstFirst(file: FileDiagnosis): DeviceDiagnosis[] {
  const seen: DeviceDiagnosis[] = [];
  for (const at of file.order) {
    const d = file.devices.find((x) => x.device === at.device);
    if (d && !seen.includes(d)) seen.push(d);
  }
  for (const d of file.devices) if (!seen.includes(d)) seen.push(d);
  return seen;
}
