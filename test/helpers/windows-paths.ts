/**
 * A JSON snapshot with its frames' files as a Windows machine records them: a drive letter,
 * backslashes, and a virtual environment's Lib\site-packages (no pythonX.Y folder on Windows).
 */
export function windowsPaths(json: string): string {
  return JSON.stringify(JSON.parse(json), (key, value) =>
    key === 'filename' && typeof value === 'string' && value.startsWith('/')
      ? `C:${value.replace(/\/lib\/python3\.\d+\/site-packages\//, '/Lib/site-packages/').replaceAll('/', '\\')}`
      : value,
  );
}
