/** Indents every line of a block of text (tables nested under a heading). */
export function indent(text: string, by = '    '): string {
  return text
    .split('\n')
    .map((l) => `${by}${l}`)
    .join('\n');
}

/**
 * Columns text is wrapped to: MEMLENS_WIDTH when set (a script's or a test's choice), else the
 * terminal's, or 100 when piped (stable output for scripts).
 */
export function textWidth(): number {
  const set = Number.parseInt(process.env.MEMLENS_WIDTH ?? '', 10);
  if (set > 0) return Math.max(40, set);
  return process.stdout.isTTY ? Math.max(60, process.stdout.columns ?? 100) : 100;
}

/** A sentence as lines of at most `width` columns, the first after `first`, the rest after `rest`. */
export function wrapIndented(text: string, width: number, first: string, rest = first): string[] {
  const lines: string[] = [];
  let line = '';
  let lead = first;
  for (const word of text.split(' ')) {
    if (line !== '' && lead.length + line.length + 1 + word.length > width) {
      lines.push(lead + line);
      lead = rest;
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') lines.push(lead + line);
  return lines;
}
