import type { Frame } from '../../model/stack-table.js';

/** Frames of the recording machinery itself (memory_viz drops the same ones). */
const NOISE_NAMES = [
  'unwind::unwind',
  'CapturedTraceback::gather',
  'gather_with_cpp',
  '_start',
  '__libc_start_main',
  'PyEval_',
  'PyObject_',
  'PyFunction_',
];
const NOISE_FILES = [
  'core/boxing',
  '/Register',
  '/Redispatch',
  'pythonrun.c',
  'Modules/main.c',
  'Objects/call.c',
  'Objects/methodobject.c',
  'pycore_ceval.h',
  'ceval.c',
  'cpython/abstract.h',
];
/** Python files that belong to libraries or the interpreter, not to the user's program. */
const LIBRARY_PATHS = ['/site-packages/', '/dist-packages/', '/lib/python', '<frozen ', '/torch/'];

function isNoise(f: Frame): boolean {
  return NOISE_NAMES.some((n) => f.name.includes(n)) || NOISE_FILES.some((n) => f.filename.includes(n));
}

function isPython(f: Frame): boolean {
  return f.filename.endsWith('.py');
}

/** A frame of the user's own Python files (not a library's, not the interpreter's). */
export function isUserCode(f: Frame): boolean {
  return isPython(f) && !LIBRARY_PATHS.some((p) => f.filename.includes(p));
}

/**
 * The frames that say where in the user's program memory was allocated: their own Python files
 * first; if the stack has none, any Python frames; else every frame but the recorder's own.
 */
export function userFrames(frames: Frame[]): Frame[] {
  const user = frames.filter(isUserCode);
  if (user.length > 0) return user;
  const python = frames.filter(isPython);
  if (python.length > 0) return python;
  return frames.filter((f) => !isNoise(f));
}
