/**
 * Words for the file's producer. memlens's sentences are written for PyTorch on CUDA; a file from
 * torch_npu (Ascend NPU) gets the NPU's words instead: its runtime is CANN, its device memory call
 * `aclrtMalloc` (Ascend/pytorch, torch_npu/csrc/core/npu/NPUCachingAllocator.cpp), its settings
 * `PYTORCH_NPU_ALLOC_CONF`, its devices `npu:N`, and the viewer its users know MindStudio Insight.
 * One table, applied where sentences leave the engine, so every command and view says the same.
 */
import type { Producer } from '../../model/producer.js';

/** CUDA's phrase → the NPU's. Longer phrases first: each is replaced once, in this order. */
const NPU_WORDS: readonly (readonly [RegExp, string])[] = [
  // torch_npu writes no time_us at all: its absence dates nothing.
  [/\(PyTorch < 2\.2\)/g, '(torch_npu records none)'],
  [/torch\.cuda\.memory\._dump_snapshot/g, 'torch_npu.npu.memory._dump_snapshot'],
  [/torch\.cuda\.memory_snapshot\(\)/g, 'torch_npu.npu.memory_snapshot()'],
  [/torch\.cuda\.memory_summary\(\)/g, 'torch_npu.npu.memory_summary()'],
  [/torch\.cuda\.empty_cache\(\)/g, 'torch_npu.npu.empty_cache()'],
  [/torch\.cuda\./g, 'torch_npu.npu.'],
  [/PYTORCH_CUDA_ALLOC_CONF/g, 'PYTORCH_NPU_ALLOC_CONF'],
  [/cudaMallocAsync/g, 'aclrtMalloc'],
  [/cudaMalloc/g, 'aclrtMalloc'],
  [/cudaFree/g, 'aclrtFree'],
  [/cudaMemGetInfo/g, 'aclrtGetMemInfo'],
  [/cudaStream_t/g, 'aclrtStream'],
  // No figure is published for the NPU's runtime: say what holds memory, not how much.
  [/the CUDA context alone takes 0\.3-1 GiB/g, 'the CANN runtime and HCCL hold some of it'],
  [/\bCUDA context\b/g, 'CANN runtime context'],
  [/\bNCCL\b/g, 'HCCL'],
  [/\bcuBLAS\b/g, 'CANN operator'],
  [/\bnvidia-smi\b/g, 'npu-smi info'],
  [/\bmemory_viz\b/g, 'MindStudio Insight'],
  [/\bCUDA\b/g, 'CANN'],
  // "a GPU" is read "a gee-pee-you"; "NPU" begins with a vowel sound.
  [/\b([Aa]) GPU\b/g, '$1n NPU'],
  [/\bGPUs\b/g, 'NPUs'],
  [/\bGPU\b/g, 'NPU'],
  [/\bcuda:(\d+)/g, 'npu:$1'],
  // "device 3" names a device; "--device 3" is an option to copy and stays as it is.
  [/(?<![-\w])device (\d+)\b/g, 'npu:$1'],
];

export function isNpu(p: Producer): boolean {
  return p.kind === 'torch_npu';
}

/**
 * memlens's commands, as findings suggest them (`memlens oom FILE --at 3`). What follows the name
 * is a file name and options: data for the shell, to be run as printed. A file under
 * `/data/GPU/` or `device 3/` reworded would name a file that does not exist.
 * (test/engine/analyses/producer/wording.test.ts holds this list to the CLI's.)
 */
export const MEMLENS_COMMANDS = [
  'diagnose',
  'summary',
  'peak',
  'events',
  'blocks',
  'oom',
  'view',
  'frag',
  'diff',
  'slice',
  'categories',
  'simulate',
  'leaks',
  'gc',
  'cycles',
  'run',
  'export',
  'sql',
  'record',
  'report',
  'check',
] as const;

/** Between words: a blank, or the ` \` line break of a wrapped command (command-lines.ts), in colour or not. */
const ANSI = String.raw`(?:\x1b\[[0-9;]*m)*`;
const BETWEEN = String.raw` (?:\\${ANSI}\n${ANSI} *)?`;
/** Shell words as shellWord writes them: quoted (a quote inside as '\''), or plain. */
const QUOTED = String.raw`'[^']*'(?:\\''[^']*')*`;
const PLAIN = String.raw`[^\s'"\x60()\\]+`;
const WORD = `(?:${QUOTED}|${PLAIN})`;
/**
 * A word after the first argument (which may be anything: a file): an option with the word after
 * it (its value), or a word that is not plain letters (a path, a count, a size). A command quoted
 * in a sentence so ends at the first plain word ("memlens leaks FILE on the GPU").
 */
const OPTION = String.raw`--?[\w-]+(?:=\S*)?(?:${BETWEEN}${WORD})?`;
const NOT_LETTERS = String.raw`[^\s'"\x60()\\]*[^a-zA-Z\s'"\x60()\\][^\s'"\x60()\\]*`;
const ARGUMENT = `(?:${OPTION}|${QUOTED}|${NOT_LETTERS})`;
/** Split at it, a text alternates sentences (even places) and commands (odd: the one group). */
const COMMAND = new RegExp(
  String.raw`(\bmemlens (?:${MEMLENS_COMMANDS.join('|')})(?=[\s)\x60'"]|$)(?:${BETWEEN}${WORD})?(?:${BETWEEN}${ARGUMENT})*)`,
);

/** A sentence (or a whole text report) in the producer's words; the commands in it as written. */
export function inProducerWords(text: string, p: Producer): string {
  if (!isNpu(p)) return text;
  return text
    .split(COMMAND)
    .map((part, i) => (i % 2 === 1 ? part : npuWords(part)))
    .join('');
}

function npuWords(text: string): string {
  let out = text;
  for (const [from, to] of NPU_WORDS) out = out.replace(from, to);
  return out;
}

/**
 * A report with its sentences in the producer's words, for a command to render (so text is wrapped
 * after the words change) and to print as JSON. Frames (dicts with a `filename`), file names and
 * the arguments of suggested commands are data, not sentences, and stay as written.
 */
export function jsonInProducerWords<T>(value: T, p: Producer): T {
  if (!isNpu(p)) return value;
  return reword(value, p) as T;
}

// `signals` are what in the file told its producer, quoted as found: evidence, not sentences.
const DATA_KEYS = new Set(['file', 'filename', 'name', 'path', 'simulate', 'signals']);

function reword(v: unknown, p: Producer): unknown {
  if (typeof v === 'string') return inProducerWords(v, p);
  if (Array.isArray(v)) return v.map((x) => reword(x, p));
  // Only plain objects are copied: typed arrays, maps and class instances are data.
  if (v === null || typeof v !== 'object' || Object.getPrototypeOf(v) !== Object.prototype) return v;
  if ('filename' in v) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[k] = DATA_KEYS.has(k) ? x : reword(x, p);
  return out;
}
