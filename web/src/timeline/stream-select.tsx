import { formatStream } from '../../../src/engine/base/index.js';

interface Props {
  streams: number[];
  stream: number | null;
  onStream: (stream: number | null) => void;
  /** Why what is drawn ignores the choice (shown, and the select disabled); undefined: it applies. */
  ignored?: string;
}

/** All streams or one: shown only when the device used more than one CUDA stream. */
export function StreamSelect({ streams, stream, onStream, ignored }: Props) {
  if (streams.length < 2) return null;
  return (
    <label title={ignored}>
      stream{' '}
      <select
        aria-label="stream"
        disabled={ignored !== undefined}
        value={stream ?? ''}
        onChange={(e) => onStream(e.target.value === '' ? null : Number(e.target.value))}
      >
        <option value="">all {streams.length} streams</option>
        {streams.map((s) => (
          <option key={s} value={s}>
            {formatStream(s)}
          </option>
        ))}
      </select>
      {ignored !== undefined && ' (not for this stack)'}
    </label>
  );
}
