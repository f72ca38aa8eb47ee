/** A labelled one-line input of an analysis form (settings, sizes), named for tests and screen readers. */
export function TextField(p: {
  label: string;
  /** The input's accessible name. */
  name: string;
  size: number;
  placeholder: string;
  title?: string;
  value: string;
  onChange: (value: string) => void;
}) {
  return (
    <label>
      {p.label}{' '}
      <input
        aria-label={p.name}
        size={p.size}
        placeholder={p.placeholder}
        title={p.title}
        value={p.value}
        onChange={(e) => p.onChange(e.target.value)}
      />
    </label>
  );
}
