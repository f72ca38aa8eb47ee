/** The engine's encode layer's front door: what code outside the engine may use of it. */
export { writeJson } from './json-writer.js';
export type { PyValue } from './pickle-values.js';
export { PyFloat, PyTuple, pyFloat, pyTuple, Shared, StreamedList } from './pickle-values.js';
export { concatChunks, PickleWriter, pickleDumps } from './pickle-writer.js';
