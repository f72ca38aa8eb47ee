import { type FormEvent, useState } from 'react';
import type { OomReading } from '../../../../src/engine/analyses/oom/index.js';
import { parseByteText } from '../../../../src/engine/base/index.js';
import { TextField } from '../analyses/text-field.js';
import { useWords } from '../producer-words.js';

/**
 * An OOM the file alone cannot judge: its two readings side by side, each with the GPU it holds
 * for, and beside them the field for the GPU's total memory that decides between them.
 */
export function OomReadings({
  readings,
  onCapacity,
}: {
  readings: OomReading[];
  onCapacity: (bytes: number) => void;
}) {
  const w = useWords();
  const [draft, setDraft] = useState('');
  const bytes = draft.trim() === '' ? null : parseByteText(draft);
  const problem = draft.trim() !== '' && bytes === null ? `${draft}: expected a size, like 80 GiB` : null;
  const judge = (e: FormEvent) => {
    e.preventDefault();
    if (bytes !== null) onCapacity(bytes);
  };
  return (
    <section className="readings" aria-label="two readings">
      {readings.map((r) => (
        <div key={r.if} className="reading" data-verdict={r.verdict}>
          <h3>
            If {r.if}: <span className="verdict">{r.verdict}</span>
          </h3>
          <p>{r.says}</p>
        </div>
      ))}
      <form className="capacity" onSubmit={judge} aria-label="decide">
        <TextField
          label={w('GPU total memory')}
          name="capacity"
          size={10}
          placeholder="e.g. 80 GiB"
          title={w("the GPU's total memory (memlens oom --capacity) decides between the readings")}
          value={draft}
          onChange={setDraft}
        />
        <button type="submit" disabled={bytes === null}>
          decide
        </button>
        {problem && <p className="error">{problem}</p>}
      </form>
    </section>
  );
}
