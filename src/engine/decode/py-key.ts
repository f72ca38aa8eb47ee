import { shortText } from '../values/py-values.js';

/**
 * Python dict keys become JS property names: the text Python's str() gives for the key, so
 * {None: 1, True: 2, (1, 'a'): 3} reads as {'None', 'True', "(1, 'a')"}.
 */
export function keyText(key: unknown): string {
  if (typeof key === 'string') return key;
  if (key === null) return 'None';
  if (key === true) return 'True';
  if (key === false) return 'False';
  if (Array.isArray(key)) {
    const items = key.map(reprText);
    return items.length === 1 ? `(${items[0]},)` : `(${items.join(', ')})`;
  }
  return shortText(key);
}

function reprText(v: unknown): string {
  return typeof v === 'string' ? `'${v}'` : keyText(v);
}
