import type { ServedFile } from '../served-files.js';
import type { Tab } from '../url-state.js';

interface Props {
  files: ServedFile[];
  current: string | null;
  /** The file's devices, each with its name (deviceName: `cuda:N`, `npu:N`). */
  devices: { device: number; label: string }[];
  /** Each device as the picker names it, with whether anything was found there. */
  deviceNames?: Map<number, string> | undefined;
  device: number | null;
  tab: Tab;
  onOpenServed: (f: ServedFile) => void;
  onOpenLocal: (f: File) => void;
  onDevice: (d: number) => void;
  onTab: (t: Tab) => void;
  /** The served run has recorded cycles: their tab is shown. */
  cycles?: boolean;
}

const TABS: [Tab, string][] = [
  ['diagnosis', 'Diagnosis'],
  ['overview', 'Overview'],
  ['timeline', 'Timeline & pool state'],
  ['flame', 'Flame graph'],
  ['analyses', 'Analyses'],
  ['events', 'Events'],
  ['blocks', 'Blocks'],
];

const CYCLES_TAB: [Tab, string][] = [['cycles', 'Cycles']];

/** Top bar: served files (ranks/steps), open a local file, device, and the view tabs. */
export function FileBar(p: Props) {
  return (
    <header className="bar">
      <strong className="brand">memlens</strong>
      {p.files.length > 0 && (
        <label>
          file{' '}
          <select
            aria-label="file"
            value={p.current ?? ''}
            onChange={(e) => {
              const f = p.files.find((x) => x.name === e.target.value);
              if (f) p.onOpenServed(f);
            }}
          >
            {/* A file opened from disk is none of the served ones: it gets its own entry, so the
                served file shown before it is not the selected one and choosing it opens it. */}
            {!p.files.some((f) => f.name === p.current) && (
              <option value={p.current ?? ''}>
                {p.current === null ? 'choose a snapshot…' : `${p.current} (opened from disk)`}
              </option>
            )}
            {p.files.map((f) => (
              <option key={f.name} value={f.name}>
                {f.label ? `${f.label} — ${f.name}` : f.name}
              </option>
            ))}
          </select>
        </label>
      )}
      <label className="open-local">
        open file…
        <input
          type="file"
          aria-label="open a snapshot file"
          onChange={(e) => {
            const f = e.target.files?.[0];
            if (f) p.onOpenLocal(f);
          }}
        />
      </label>
      {p.devices.length > 0 && (
        <label>
          device{' '}
          <select
            aria-label="device"
            value={p.device ?? ''}
            onChange={(e) => p.onDevice(Number(e.target.value))}
          >
            {p.devices.map(({ device: d, label }) => (
              <option key={d} value={d}>
                {p.deviceNames?.get(d) ?? label}
              </option>
            ))}
          </select>
        </label>
      )}
      <div className="tabs" role="tablist">
        {[...TABS, ...(p.cycles ? CYCLES_TAB : [])].map(([t, label]) => (
          <button key={t} type="button" role="tab" aria-selected={p.tab === t} onClick={() => p.onTab(t)}>
            {label}
          </button>
        ))}
      </div>
    </header>
  );
}
