/**
 * Text reports fitted to the terminal: sentences wrapped at spaces under their own indent, a word
 * too long for a line (a path) cut in the middle with "…". Tables (box-drawing lines) are left
 * as drawn: their cells are already short. Piped output uses a fixed width (textWidth: 100), so
 * what scripts read does not depend on the terminal it ran in.
 */

const ANSI = /\u001b\[[0-9;]*m/g;
const TABLE_LINE = /^\s*[┌│├└╔║╟╚─]/;
/**
 * A shell command printed to be copied ("$ memlens simulate FILE --set …", command-lines.ts):
 * kept whole, and so are the lines it continues onto (a trailing backslash).
 */
const COMMAND_LINE = /^\s*\$ /;
const CONTINUED = / \\$/;

/** Columns a string takes on screen (colour codes take none). */
export function visibleLength(s: string): number {
  return s.replace(ANSI, '').length;
}

/** A plain string of at most `max` columns: its start and end kept, "…" for the middle. */
export function shortenMiddle(s: string, max: number): string {
  if (s.length <= max) return s;
  if (max <= 1) return '…';
  const tail = Math.ceil((max - 1) * 0.6);
  return `${s.slice(0, max - 1 - tail)}…${s.slice(s.length - tail)}`;
}

/** Every line of a report fitted to `width` columns. */
export function fitToWidth(text: string, width: number): string {
  let inCommand = false;
  return text
    .split('\n')
    .flatMap((line) => {
      const plain = line.replace(ANSI, '');
      const whole = inCommand || COMMAND_LINE.test(plain);
      inCommand = whole && CONTINUED.test(plain);
      return whole ? [line] : fitLine(line, width);
    })
    .join('\n');
}

function fitLine(line: string, width: number): string[] {
  if (visibleLength(line) <= width || TABLE_LINE.test(line)) return [line];
  const lead = /^ */.exec(line)![0];
  const rest = `${lead}  `;
  const out: string[] = [];
  let current = lead;
  let empty = true;
  for (const raw of line.slice(lead.length).split(' ')) {
    // A cut word may go on a continuation line: fit it there.
    const room = width - rest.length;
    const word = visibleLength(raw) > room && !raw.includes('\u001b') ? shortenMiddle(raw, room) : raw;
    if (!empty && visibleLength(current) + 1 + visibleLength(word) > width) {
      out.push(current);
      current = rest + word;
    } else current = empty ? current + word : `${current} ${word}`;
    empty = false;
  }
  out.push(current);
  return out;
}
