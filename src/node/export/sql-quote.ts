/**
 * Every piece of SQL text memlens builds from a value (a file name, a path, a table name read from
 * an export's manifest, a frame name) goes through here, so that no value is ever read as SQL.
 */
import { SnapshotError } from '../../engine/base/index.js';

/**
 * A DuckDB string literal. DuckDB's parser ends a literal at a NUL, so a NUL (a frame name may
 * hold one) is spliced in as chr(0): the result is then an expression, not a bare literal.
 */
export function sqlString(text: string): string {
  const quoted = text.split('\0').map((part) => `'${part.replaceAll("'", "''")}'`);
  return quoted.length === 1 ? quoted[0]! : `(${quoted.join(' || chr(0) || ')})`;
}

/** Whether sqlString gives a plain literal (usable where DuckDB takes only constants, as ENUM). */
export function isPlainLiteral(text: string): boolean {
  return !text.includes('\0');
}

/** A quoted identifier; no identifier can hold a NUL. */
export function sqlIdentifier(name: string): string {
  if (name.includes('\0')) throw new SnapshotError('an SQL name cannot hold a NUL byte');
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * A list of files to read, each naming exactly that file. DuckDB expands * ? and [ in every path
 * it reads, list items included, so each of them is escaped as a one-character class ([*]). Its
 * glob splits paths at backslashes too, so a path holding both cannot be named: refused.
 */
export function sqlFileList(files: readonly string[]): string {
  return `[${files.map((f) => sqlString(literalGlob(f))).join(', ')}]`;
}

function literalGlob(file: string): string {
  if (!/[*?[]/.test(file)) return file;
  if (file.includes('\\'))
    throw new SnapshotError(`${file}: DuckDB cannot read a path holding \\ together with * ? or [`);
  return file.replace(/[*?[]/g, '[$&]');
}
