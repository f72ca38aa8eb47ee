/**
 * The tracebacks of a GPT-style training script, shaped like what `_record_memory_history(
 * stacks="all")` captures: allocator and dispatcher C++ frames, Python frames of the model and of
 * torch, interpreter start-up frames; the autograd thread for backward. 20-40 frames deep.
 */
import type { FrameSpec, Stack, StackTable } from './frames.js';
import type { Rng } from './rng.js';

const cpp = (name: string, file = '??'): FrameSpec => [name, file, 0];

const CAPTURE = [
  cpp('torch::unwind::unwind()'),
  cpp('torch::CapturedTraceback::gather(bool, bool, bool)'),
  cpp('torch::cuda::(anonymous namespace)::gather_with_cpp()', 'memory_snapshot.cpp'),
];
const ALLOC_PREFIX = [
  ...CAPTURE,
  cpp(
    'c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(unsigned long, CUstream_st*)',
    'CUDACachingAllocator.cpp',
  ),
  cpp(
    'c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::malloc(void**, signed char, unsigned long, CUstream_st*)',
    '',
  ),
  cpp('c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::allocate(unsigned long)', ''),
];
const FREE_PREFIX = [
  ...CAPTURE,
  cpp(
    'c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::free(c10::cuda::CUDACachingAllocator::Native::(anonymous namespace)::Block*)',
    'CUDACachingAllocator.cpp',
  ),
  cpp('c10::cuda::CUDACachingAllocator::Native::local_raw_delete(void*)', ''),
  cpp('c10::StorageImpl::~StorageImpl()'),
  cpp(
    'c10::intrusive_ptr<c10::StorageImpl, c10::detail::intrusive_target_default_null_type<c10::StorageImpl> >::reset_not_null_(c10::StorageImpl*)',
  ),
  cpp('c10::TensorImpl::~TensorImpl() [clone .localalias]', 'TensorImpl.cpp'),
];
/** Where the interpreter calls into a C extension function. */
const PY_CALL = [cpp('cfunction_call'), cpp('_PyObject_MakeTpCall'), cpp('_PyEval_EvalFrameDefault')];
const PY_DEALLOC = [
  cpp('THPVariable_clear(THPVariable*)', 'python_variable.cpp'),
  cpp('THPVariable_dealloc(_object*)', 'python_variable.cpp'),
  cpp('_PyEval_EvalFrameDefault'),
];
const INTERPRETER = [
  cpp('PyEval_EvalCode'),
  cpp('_PyRun_SimpleFileObject'),
  cpp('_PyRun_AnyFileObject'),
  cpp('Py_RunMain'),
  cpp('Py_BytesMain'),
  cpp('__libc_start_main'),
  cpp('_start'),
];
const AUTOGRAD_THREAD = [
  cpp(
    'torch::autograd::Engine::evaluate_function(std::shared_ptr<torch::autograd::GraphTask>&, torch::autograd::Node*, torch::autograd::InputBuffer&, std::shared_ptr<torch::autograd::ReadyQueue> const&)',
    'engine.cpp',
  ),
  cpp(
    'torch::autograd::Engine::thread_main(std::shared_ptr<torch::autograd::GraphTask> const&)',
    'engine.cpp',
  ),
  cpp(
    'torch::autograd::Engine::thread_init(int, std::shared_ptr<torch::autograd::ReadyQueue> const&, bool)',
    'engine.cpp',
  ),
  cpp(
    'torch::autograd::python::PythonEngine::thread_init(int, std::shared_ptr<torch::autograd::ReadyQueue> const&, bool)',
    'python_engine.cpp',
  ),
  cpp('std::error_code::default_error_condition() const'),
  cpp('start_thread'),
  cpp('__clone'),
];
const TENSOR_ARGS = 'at::Tensor const&, at::Tensor const&';

function opFrames(op: string): FrameSpec[] {
  return [
    cpp(
      'at::detail::empty_cuda(c10::ArrayRef<long>, c10::ScalarType, std::optional<c10::Device>, std::optional<c10::MemoryFormat>)',
    ),
    cpp(`at::(anonymous namespace)::wrapper_CUDA_${op}(${TENSOR_ARGS})`, 'RegisterCUDA_0.cpp'),
    cpp(`at::_ops::${op}::redispatch(c10::DispatchKeySet, ${TENSOR_ARGS})`),
    cpp(
      `torch::autograd::VariableType::(anonymous namespace)::${op}(c10::DispatchKeySet, ${TENSOR_ARGS})`,
      'VariableType_0.cpp',
    ),
    cpp(`at::_ops::${op}::call(${TENSOR_ARGS})`),
  ];
}

/** Places in the Python program; each is a chain of Python frames, innermost first. */
export type Place =
  | 'to_device'
  | 'wte'
  | 'wpe'
  | 'ln_1'
  | 'c_attn'
  | 'sdpa'
  | 'attn_proj'
  | 'attn_dropout'
  | 'resid_attn'
  | 'ln_2'
  | 'c_fc'
  | 'gelu'
  | 'mlp_proj'
  | 'mlp_dropout'
  | 'resid_mlp'
  | 'ln_f'
  | 'lm_head'
  | 'loss'
  | 'get_batch'
  | 'step_end'
  | 'clip_grad'
  | 'adam'
  | 'adam_init'
  | 'zero_grad'
  | 'empty_cache'
  | 'graph_capture'
  | 'keep_loss'
  | 'cycle'
  | 'gc_collect'
  | 'kv_cache'
  | 'rank_buffer';

export class CallSites {
  private readonly model: string;
  private readonly train: string;
  private readonly torch: string;
  private readonly places: Record<Place, FrameSpec[]>;
  /** Stacks by their two-part key, so the hot path builds no key strings or closures. */
  private readonly caches = { a: new Map(), f: new Map(), ba: new Map(), bf: new Map() } as Record<
    'a' | 'f' | 'ba' | 'bf',
    Map<string, Map<string, Stack>>
  >;

  constructor(
    private readonly table: StackTable,
    rng: Rng,
  ) {
    const root = rng.pick([
      '/home/alice/nanogpt',
      '/workspace/llm-train',
      '/mnt/code/transformer',
      '/data/user/gpt',
    ]);
    const py = rng.pick(['3.10', '3.11', '3.12']);
    this.model = `${root}/model.py`;
    this.train = `${root}/train.py`;
    this.torch = `${root}/.venv/lib/python${py}/site-packages/torch`;
    this.places = this.buildPlaces();
  }

  /** An allocation made by an op called from Python at `place`. */
  alloc(place: Place, op: string): Stack {
    return (
      this.cached('a', place, op) ??
      this.store('a', place, op, [
        ...ALLOC_PREFIX,
        ...opFrames(op),
        cpp(
          `torch::autograd::THPVariable_${op}(_object*, _object*, _object*)`,
          'python_torch_functions_0.cpp',
        ),
        ...PY_CALL,
        ...this.places[place],
        ...INTERPRETER,
      ])
    );
  }

  /** A tensor freed when Python drops its last reference at `place`. */
  free(place: Place): Stack {
    return (
      this.cached('f', place, '') ??
      this.store('f', place, '', [...FREE_PREFIX, ...PY_DEALLOC, ...this.places[place], ...INTERPRETER])
    );
  }

  /** An allocation made by an autograd node on the backward thread. */
  backwardAlloc(node: string, op: string): Stack {
    return (
      this.cached('ba', node, op) ??
      this.store('ba', node, op, [
        ...ALLOC_PREFIX,
        ...opFrames(op),
        cpp(
          `torch::autograd::generated::${node}::apply(std::vector<at::Tensor, std::allocator<at::Tensor> >&&)`,
          'Functions.cpp',
        ),
        cpp(
          'torch::autograd::Node::operator()(std::vector<at::Tensor, std::allocator<at::Tensor> >&&)',
          'function.h',
        ),
        ...AUTOGRAD_THREAD,
      ])
    );
  }

  /** A saved tensor or an intermediate gradient released by the backward thread. */
  backwardFree(node: string): Stack {
    return (
      this.cached('bf', node, '') ??
      this.store('bf', node, '', [
        ...FREE_PREFIX,
        cpp('c10::TensorImpl::release_resources()', 'TensorImpl.cpp'),
        cpp('c10::intrusive_ptr<c10::TensorImpl, c10::UndefinedTensorImpl>::reset_()'),
        cpp('torch::autograd::SavedVariable::reset_data()', 'saved_variable.cpp'),
        cpp(`torch::autograd::generated::${node}::release_variables()`, 'Functions.h'),
        cpp(
          'torch::autograd::call_function(std::shared_ptr<torch::autograd::GraphTask>&, torch::autograd::Node*, torch::autograd::InputBuffer&)',
          'engine.cpp',
        ),
        ...AUTOGRAD_THREAD,
      ])
    );
  }

  private cached(kind: 'a' | 'f' | 'ba' | 'bf', a: string, b: string): Stack | undefined {
    return this.caches[kind].get(a)?.get(b);
  }

  private store(kind: 'a' | 'f' | 'ba' | 'bf', a: string, b: string, frames: FrameSpec[]): Stack {
    const stack = this.table.stack(`${kind}:${a}:${b}`, () => frames);
    let inner = this.caches[kind].get(a);
    if (inner === undefined) {
      inner = new Map();
      this.caches[kind].set(a, inner);
    }
    inner.set(b, stack);
    return stack;
  }

  /** Gradient buckets of DistributedDataParallel, filled from autograd hooks. */
  bucketAlloc(): Stack {
    return this.table.stack('bucket', () => [
      ...ALLOC_PREFIX,
      ...opFrames('empty'),
      cpp('c10d::Reducer::mark_variable_ready(unsigned long)', 'reducer.cpp'),
      cpp('c10d::Reducer::autograd_hook(unsigned long)', 'reducer.cpp'),
      ...AUTOGRAD_THREAD,
    ]);
  }

  /** A tensor freed by Python's cycle collector, inside gc.collect() at `gc_collect`. */
  gcFree(): Stack {
    return this.table.stack('gc_free', () => [
      ...FREE_PREFIX,
      cpp('THPVariable_clear(THPVariable*)', 'python_variable.cpp'),
      cpp('delete_garbage', 'Modules/gcmodule.c'),
      cpp('gc_collect_main', 'Modules/gcmodule.c'),
      cpp('gc_collect', 'Modules/clinic/gcmodule.c.h'),
      ...PY_CALL,
      ...this.places.gc_collect,
      ...INTERPRETER,
    ]);
  }

  emptyCache(): Stack {
    return this.table.stack('empty_cache', () => [
      ...CAPTURE,
      cpp(
        'c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::emptyCache()',
        'CUDACachingAllocator.cpp',
      ),
      cpp('c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::emptyCache()', ''),
      cpp('THCPModule_emptyCache(_object*, _object*)', 'Module.cpp'),
      ...PY_CALL,
      ...this.places.empty_cache,
      ...INTERPRETER,
    ]);
  }

  private buildPlaces(): Record<Place, FrameSpec[]> {
    const m = this.model;
    const t = this.torch;
    const call = (): FrameSpec[] => [
      ['_call_impl', `${t}/nn/modules/module.py`, 1773],
      ['_wrapped_call_impl', `${t}/nn/modules/module.py`, 1762],
    ];
    const main: FrameSpec[] = [
      ['main', this.train, 287],
      ['<module>', this.train, 312],
    ];
    const step = (line: number): FrameSpec[] => [['train_step', this.train, line], ...main];
    const gpt = (line: number): FrameSpec[] => [['forward', m, line], ...call(), ...step(212)];
    const block = (line: number): FrameSpec[] => [['forward', m, line], ...call(), ...gpt(171)];
    const attn = (line: number): FrameSpec[] => [['forward', m, line], ...call(), ...block(104)];
    const mlp = (line: number): FrameSpec[] => [['forward', m, line], ...call(), ...block(105)];
    const linear: FrameSpec = ['forward', `${t}/nn/modules/linear.py`, 125];
    const norm: FrameSpec[] = [
      ['layer_norm', `${t}/nn/functional.py`, 2910],
      ['forward', `${t}/nn/modules/normalization.py`, 217],
    ];
    const dropout: FrameSpec[] = [
      ['dropout', `${t}/nn/functional.py`, 1425],
      ['forward', `${t}/nn/modules/dropout.py`, 70],
    ];
    const adam = (line: number): FrameSpec[] => [
      ['_multi_tensor_adam', `${t}/optim/adam.py`, line],
      ['maybe_fallback', `${t}/optim/optimizer.py`, 154],
      ['adam', `${t}/optim/adam.py`, 940],
      ['step', `${t}/optim/adam.py`, 247],
      ['_use_grad', `${t}/optim/optimizer.py`, 79],
      ['wrapper', `${t}/optim/optimizer.py`, 485],
      ...step(216),
    ];
    return {
      to_device: [
        ['convert', `${t}/nn/modules/module.py`, 1355],
        ['_apply', `${t}/nn/modules/module.py`, 942],
        ['_apply', `${t}/nn/modules/module.py`, 915],
        ['_apply', `${t}/nn/modules/module.py`, 915],
        ['to', `${t}/nn/modules/module.py`, 1369],
        ...main,
      ],
      wte: [
        ['embedding', `${t}/nn/functional.py`, 2551],
        ['forward', `${t}/nn/modules/sparse.py`, 190],
        ...call(),
        ...gpt(166),
      ],
      wpe: [
        ['embedding', `${t}/nn/functional.py`, 2551],
        ['forward', `${t}/nn/modules/sparse.py`, 190],
        ...call(),
        ...gpt(167),
      ],
      ln_1: [...norm, ...call(), ...block(104)],
      c_attn: [linear, ...call(), ...attn(47)],
      sdpa: attn(55),
      attn_proj: [linear, ...call(), ...attn(61)],
      attn_dropout: [...dropout, ...call(), ...attn(61)],
      resid_attn: block(104),
      ln_2: [...norm, ...call(), ...block(105)],
      c_fc: [linear, ...call(), ...mlp(80)],
      gelu: [['forward', `${t}/nn/modules/activation.py`, 734], ...call(), ...mlp(81)],
      mlp_proj: [linear, ...call(), ...mlp(82)],
      mlp_dropout: [...dropout, ...call(), ...mlp(83)],
      resid_mlp: block(105),
      ln_f: [...norm, ...call(), ...gpt(172)],
      lm_head: [linear, ...call(), ...gpt(173)],
      loss: [['cross_entropy', `${t}/nn/functional.py`, 3494], ...gpt(174)],
      get_batch: [['get_batch', this.train, 121], ...step(208)],
      step_end: step(219),
      clip_grad: [
        ['clip_grad_norm_', `${t}/nn/utils/clip_grad.py`, 106],
        ['_no_grad_wrapper', `${t}/nn/utils/clip_grad.py`, 38],
        ...step(215),
      ],
      adam: adam(613),
      adam_init: [
        ['_init_group', `${t}/optim/adam.py`, 174],
        ['step', `${t}/optim/adam.py`, 235],
        ...adam(0).slice(4),
      ],
      zero_grad: [['zero_grad', `${t}/optim/optimizer.py`, 1001], ...step(217)],
      empty_cache: [['empty_cache', `${t}/cuda/memory.py`, 224], ...step(221)],
      keep_loss: step(218),
      cycle: gpt(176),
      gc_collect: step(207),
      kv_cache: [['allocate_kv_cache', this.train, 131], ...main],
      rank_buffer: [['allocate_rank_buffer', this.train, 143], ...main],
      graph_capture: [
        ['forward', m, 47],
        ...call(),
        ['capture', `${this.train.replace('train.py', 'graphs.py')}`, 31],
        ...main,
      ],
    };
  }
}
