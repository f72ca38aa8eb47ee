import { formatStream } from '../../../src/engine/format.js';

interface Props {
  streams: number[];
  stream: number | null;
  onStream: (stream: number | null) => void;
}

/** All streams or one: shown only when the device used more than one CUDA stream. */
export function StreamSelect({ streams, stream, onStream }: Props) {
  if (streams.length < 2) return null;
  return (
    <label>
      stream{' '}
      <select
        aria-label="stream"
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
    </label>
  );
}
