/** Indents every line of a block of text (tables nested under a heading). */
export function indent(text: string, by = '    '): string {
  return text
    .split('\n')
    .map((l) => `${by}${l}`)
    .join('\n');
}
