/**
 * What a frame of a recorded stack is: the user's own code, a library's, or the machinery that
 * every allocation passes through (the recorder, the allocator, the dispatcher, the interpreter).
 * The machinery says nothing about why memory was allocated, so reports and views hide it unless
 * asked for whole stacks. PyTorch's memory_viz hides the recorder and interpreter frames by the
 * same kind of name and file tests; the allocator and dispatcher lists go further, because a
 * backward-pass stack has no Python frames and its first frame would otherwise be the allocator.
 */

/** The fields a frame test reads (a model Frame, a frame sent to the web app). */
export interface FrameLike {
  filename: string;
  line: number;
  name: string;
}

export type FrameKind =
  /** A Python file of the user's program. */
  | 'user'
  /** A Python file of a library (site-packages, the standard library, torch). */
  | 'library'
  /** C++ that names an operator or an autograd node (at::native::addmm, MulBackward0::apply). */
  | 'native'
  /** The stack recorder itself (unwind, CapturedTraceback), and memlens record's Python helper. */
  | 'recorder'
  /** The caching allocator and the code that only makes a tensor's storage (empty_*, TensorIterator outputs). */
  | 'allocator'
  /** Operator dispatch (boxing, redispatch, registrations, generated autograd wrappers) and the autograd engine's scheduling of backward nodes. */
  | 'dispatcher'
  /** CPython's evaluator and call machinery, process and thread start; native frames with no name ('??'). */
  | 'interpreter';

/** Kinds hidden unless whole stacks are asked for. */
export const HIDDEN_KINDS: ReadonlySet<FrameKind> = new Set([
  'recorder',
  'allocator',
  'dispatcher',
  'interpreter',
]);

/** One expression that matches when any of the given ones does (each a family of frames). */
function anyOf(...patterns: RegExp[]): RegExp {
  return new RegExp(patterns.map((p) => `(?:${p.source})`).join('|'));
}

const RECORDER_NAMES = ['unwind::unwind', 'CapturedTraceback::gather', 'gather_with_cpp'];
const RECORDER_FILES = ['memory_snapshot.cpp'];

/**
 * A native frame the unwinder could not name: '??' (torch_npu's symbolizer, and addr2line's),
 * a bare address, or nothing. It says nothing about why memory was allocated, so it is hidden
 * with the interpreter's frames; a named one in a `.so` at line 0 (torch_npu's native frames, e.g.
 * an operator of libtorch_npu.so) still names its code and stays.
 */
function isUnnamed(f: FrameLike): boolean {
  const name = f.name.trim();
  return name === '' || name === '??' || /^(0x)?[0-9a-f]+$/i.test(name);
}

/** The allocator, and frames that only create or free storage on the way to it. */
const ALLOCATOR_NAMES = anyOf(
  /CUDACachingAllocator|c10::(cuda::)?[A-Za-z]*Allocator/,
  /c10::cuda::.*(malloc|free|allocate|raw_delete)/,
  // torch_npu (Ascend/pytorch): the caching and workspace allocators (c10_npu::NPUCachingAllocator,
  // NPUWorkspaceAllocator.cpp), and OpPreparation, which only makes an operator's output tensor
  // (torch_npu/csrc/framework/utils/OpPreparation.cpp, apply_tensor*), as at::empty does.
  /c10_npu::(NPUCachingAllocator|NPUWorkspaceAllocator)|c10_npu::.*(malloc|free|allocate|raw_delete)/,
  /at_npu::native::(OpPreparation|NPUNativeFunctions::(empty|new_empty)|empty_with_format)/,
  // Releasing storage: refcounts, destructors, a Python tensor's dealloc.
  /c10::(StorageImpl|TensorImpl)::(~|release_resources|decref_pyobject)|intrusive_ptr<c10::(StorageImpl|TensorImpl)/,
  /^THPVariable_(subclass_)?(clear|dealloc)/,
  // Making an output tensor: the empty_* factories, TensorIterator and structured-kernel outputs, resize.
  /at::(detail|native)::(_?empty|new_empty)|at::empty|at::TensorBase at::detail::_empty/,
  /at::TensorIterator(Base)?::(build|fast_set_up|allocate_or_resize_outputs|set_output)|set_output_raw_strided|create_out\(/,
  /at::meta::resize|at::native::resize_(output|bytes|impl|cuda_)/,
);
const ALLOCATOR_FILES = [
  'CUDACachingAllocator.cpp',
  'NPUCachingAllocator.cpp',
  'NPUWorkspaceAllocator.cpp',
  'OpPreparation.cpp',
  'TensorImpl.cpp',
  'StorageImpl',
];

/**
 * Dispatch machinery: the kernel an operator goes through on its way to the code that runs, and
 * the autograd engine's threads that call each backward node (the node itself, MulBackward0::apply,
 * stays: it names the operator).
 */
const DISPATCHER_NAMES = anyOf(
  /c10::impl::|c10::Dispatcher|c10::BoxedKernel|c10::KernelFunction|c10::OperatorHandle|boxed_kernel/,
  /at::_ops::|::redispatch\(|wrapper_(CUDA|CPU|Composite|Meta|Functionalize|Autograd)/,
  /torch::autograd::VariableType::|torch::ADInplaceOrView::|at::functionalization::|torch::TraceType::/,
  /torch::autograd::(Engine|python::PythonEngine)::|torch::autograd::Node::operator\(\)|torch::autograd::call_function/,
  /TypeError_to_NotImplemented_|std::_Function_handler</,
);
const DISPATCHER_FILES = [
  'core/boxing',
  'Register',
  'Redispatch',
  'VariableType',
  'ADInplaceOrView',
  'TraceType',
];

/** CPython's internals (and Cython's, an event loop's, dynamo's frame evaluation), process and thread start. */
const INTERPRETER_NAMES = anyOf(
  /^(_?Py[A-Z][A-Za-z]*_|_?PyEval|_?PyObject_|_?PyFunction_|_?PyVectorcall|_?PyRun|Py_RunMain|Py_BytesMain|Py_Main|pymain_)/,
  /^(cfunction_(call|vectorcall)|method_vectorcall|vectorcall_|slot_tp_)/,
  /^(__Pyx_|__pyx_|uv_|uv__|dynamo__custom_eval_frame|dynamo_eval_)/,
  /ConcretePyInterpreterVTable::/,
  /^(_start|__libc_init_first|start_thread|__clone3?|clone3?|execute_native_thread_routine)$|^(pthread_|__libc_start)/,
  /^std::error_code::default_error_condition/,
);
const INTERPRETER_FILES = [
  'pythonrun.c',
  'Modules/main.c',
  'Objects/',
  'Python/',
  'pycore_ceval.h',
  'ceval.c',
  'cpython/abstract.h',
];

/**
 * Python files of libraries and the interpreter, matched on a path with forward slashes and a
 * leading slash: a virtual environment (site-packages, dist-packages), a Unix standard library
 * (lib/python3.11), a Windows one (C:\\Python311\\Lib\\, a venv's or conda's Lib\\: capital L, as
 * Windows installs name it, so a project's own lib/ folder stays the user's), torch itself,
 * frozen modules.
 */
const LIBRARY_PATHS = [
  /\/(site|dist)-packages\//i,
  /\/lib\/python\d/i,
  /\/Lib\//,
  /\/torch\//,
  /^\/<frozen /,
];

/** A path with forward slashes (Windows paths keep their drive letter). */
export function slashPath(path: string): string {
  return path.includes('\\') ? path.replaceAll('\\', '/') : path;
}

function isPython(f: FrameLike): boolean {
  return f.filename.endsWith('.py') || f.filename.startsWith('<frozen ');
}

/**
 * memlens record's own helper (python/memlens/ of this package, put first on PYTHONPATH): with
 * --cycles, the garbage a collection saved is freed in its follow-up (cycles.py run_followup), so
 * without this the helper would be named where the user's cycles were freed.
 */
const MEMLENS_HELPER =
  /\/python\/memlens\/(cycles|_record|_graph|_history|_steps|_after_import|__init__)\.py$/;

/** A frame of memlens record's own Python helper. */
export function isMemlensHelper(f: FrameLike): boolean {
  return MEMLENS_HELPER.test(`/${slashPath(f.filename)}`);
}

/** A frame of the user's own Python files (not a library's, not the interpreter's, not memlens's helper). */
export function isUserCode(f: FrameLike): boolean {
  if (!isPython(f)) return false;
  const p = `/${slashPath(f.filename)}`;
  return !isMemlensHelper(f) && !LIBRARY_PATHS.some((r) => r.test(p));
}

export function frameKind(f: FrameLike): FrameKind {
  if (isPython(f)) {
    if (isMemlensHelper(f)) return 'recorder';
    return isUserCode(f) ? 'user' : 'library';
  }
  const { name, filename } = f;
  if (RECORDER_NAMES.some((n) => name.includes(n)) || RECORDER_FILES.some((n) => filename.includes(n)))
    return 'recorder';
  if (ALLOCATOR_NAMES.test(name) || ALLOCATOR_FILES.some((n) => filename.includes(n))) return 'allocator';
  if (DISPATCHER_NAMES.test(name) || DISPATCHER_FILES.some((n) => filename.includes(n))) return 'dispatcher';
  if (INTERPRETER_NAMES.test(name) || INTERPRETER_FILES.some((n) => filename.includes(n)) || isUnnamed(f))
    return 'interpreter';
  return 'native';
}

export function isHidden(f: FrameLike): boolean {
  return HIDDEN_KINDS.has(frameKind(f));
}
