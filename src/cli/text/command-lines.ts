/**
 * Commands printed to be copied into a shell: never cut, wrapped only between shell words with a
 * trailing backslash (a POSIX shell joins such lines), and a word too long for any line (a long
 * path) on a line of its own from the first column, where the terminal may fold it but a copy
 * keeps it whole.
 */

/** The marker a printed command starts with; text-width.ts keeps such lines, and their continuations, whole. */
export const COMMAND_PROMPT = '$ ';
const CONTINUED = ' \\';

/** The shell words of a command as printed (quotes kept): split at blanks outside quotes. */
export function shellWords(command: string): string[] {
  const words: string[] = [];
  let word = '';
  let quote: string | null = null;
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    // A backslash escapes the next character outside single quotes: both stay in the word.
    if (c === '\\' && quote !== "'") {
      word += c + (command[++i] ?? '');
      continue;
    }
    if (quote !== null) {
      if (c === quote) quote = null;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === ' ') {
      if (word !== '') words.push(word);
      word = '';
      continue;
    }
    word += c;
  }
  if (word !== '') words.push(word);
  return words;
}

/**
 * A command as lines of at most `width` columns where its words allow, each line but the last
 * continued; the first after `prompt` ("see: " where a report names the command to run next).
 */
export function commandLines(
  command: string,
  width: number,
  indent: string,
  prompt = COMMAND_PROMPT,
): string[] {
  const first = `${indent}${prompt}`;
  const rest = `${indent}    `;
  if (first.length + command.length <= width) return [first + command];
  const lines: string[] = [];
  let line = first;
  let lead = first;
  for (const word of shellWords(command)) {
    const fits = line.length + (line === lead ? 0 : 1) + word.length + CONTINUED.length <= width;
    if (line === lead || fits) {
      line = line === lead ? line + word : `${line} ${word}`;
      continue;
    }
    lines.push(line + CONTINUED);
    // Too long for an indented line: a line of its own, unindented, so a copy takes it whole.
    lead = rest.length + word.length + CONTINUED.length <= width ? rest : '';
    line = lead + word;
  }
  lines.push(line);
  return lines;
}
