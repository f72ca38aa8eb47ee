/**
 * What a stack says about the tensor it allocated or freed, as bit flags per frame and per stack
 * (computed once per distinct frame and stack: a 10M-entry trace has only thousands of stacks).
 * The patterns are the frames real PyTorch stacks carry (Python frames of torch.nn / torch.optim /
 * torch.autograd, and the autograd engine's C++ frames when stacks="all"), not the generator's.
 */
import type { StackTable } from '../../model/stack-table.js';
import { frameworkTraits } from './category-frameworks.js';

export enum Trait {
  /** nn.Module._apply / .to / .cuda / convert: the model moved to the GPU. */
  moduleToDevice = 1 << 0,
  /** A model or layer constructor (torch.nn, Megatron, Transformer Engine, vLLM): weights created on the GPU. */
  moduleInit = 1 << 1,
  /** load_state_dict / _load_from_state_dict: weights loaded. */
  loadState = 1 << 2,
  /** torch.optim _init_group (state created lazily in the first step), an optimizer constructor (Megatron's fp32 main params), init_state_fn. */
  optimizerInit = 1 << 3,
  /** Any frame in torch/optim. */
  optimizer = 1 << 4,
  /** AccumulateGrad: the engine writing a leaf's .grad. */
  accumulateGrad = 1 << 5,
  /** The autograd engine or a backward entry point (Python or C++ frames). */
  backward = 1 << 6,
  /** nn.Module.__call__ (forward of a module). */
  forward = 1 << 7,
  /** Optimizer.zero_grad / Module.zero_grad. */
  zeroGrad = 1 << 8,
  /** torch.nn.utils.clip_grad: per-parameter norms, freed once the scale is applied. */
  clipGrad = 1 << 9,
  /** A weight initialiser of any program (init_weight, init_weights, init_weight_list, _init_weights). */
  weightInit = 1 << 10,
  /** Weights loaded from a checkpoint (from_pretrained, load_checkpoint, load_state_dict outside torch.optim, dist_checkpointing). */
  loadWeights = 1 << 11,
}

const MODULE_PY = /torch\/nn\/modules\/module\.py$/;
const NN_MODULES = /torch\/nn\/(modules\/[^/]+|init|parameter)\.py$/;
const OPTIM_PY = /torch\/optim\/[^/]+\.py$/;
/** Files that build models: torch/nn/modules, and the layers/models folders of Megatron, TE, vLLM, HF. */
const MODEL_FILE = /\/(nn|nn\/modules|layers?|modules?|models?(\/[^/]+)?|transformer|embeddings)\/[^/]+\.py$/;
const OPTIMIZER_FILE = /optim/i;
/** FlexGen's init_weight_list / init_all_weights, Hugging Face's _init_weights, timm's init_weights. */
const WEIGHT_INIT = /^_?(init|initiali[sz]e)_(all_)?weights?(_list)?$/;
/** Loading a model's weights: Hugging Face, Megatron, DeepSpeed, vLLM, safetensors, torch.distributed.checkpoint. */
const LOAD_WEIGHTS =
  /^(_?load_state_dict|_load_from_state_dict|from_pretrained|_?load_(pretrained_model|checkpoint|model|weights|sharded_checkpoint|state_dict_into_(meta_)?model|global_dist_base_checkpoint|base_checkpoint)|load_checkpoint_in_model|load_model_weights)$/;
/** Checkpoint readers whose own functions are named plainly (load, load_file, _load_state_dict). */
const CHECKPOINT_FILE = /\/(dist_checkpointing|distributed\/checkpoint|safetensors)\/[^/]+\.py$/;

function frameTraits(filename: string, name: string): number {
  let t = 0;
  if (MODULE_PY.test(filename)) {
    if (name === '_apply' || name === 'to' || name === 'cuda' || name === 'convert')
      t |= Trait.moduleToDevice;
    if (name === '_call_impl' || name === '_wrapped_call_impl') t |= Trait.forward;
    if (name === 'load_state_dict' || name === '_load_from_state_dict') t |= Trait.loadState;
  }
  if (OPTIMIZER_FILE.test(filename)) {
    if (name === '_init_group' || name === 'init_state_fn' || name === '__init__') t |= Trait.optimizerInit;
  } else {
    if (isConstructor(filename, name)) t |= Trait.moduleInit;
    if (WEIGHT_INIT.test(name)) t |= Trait.weightInit;
    if (LOAD_WEIGHTS.test(name) || (CHECKPOINT_FILE.test(filename) && /^_?load/.test(name)))
      t |= Trait.loadWeights;
  }
  if (OPTIM_PY.test(filename)) t |= Trait.optimizer;
  if (filename.endsWith('torch/nn/utils/clip_grad.py')) t |= Trait.clipGrad;
  if (name === 'zero_grad') t |= Trait.zeroGrad;
  if (name.includes('AccumulateGrad') || name.includes('accumulate_grad')) t |= Trait.accumulateGrad;
  if (isBackwardFrame(filename, name)) t |= Trait.backward;
  return t | frameworkTraits(filename, name);
}

function isConstructor(filename: string, name: string): boolean {
  if (name === 'reset_parameters' || name === 'create_weights') return true;
  if (name !== '__init__') return false;
  return NN_MODULES.test(filename) || MODEL_FILE.test(filename);
}

function isBackwardFrame(filename: string, name: string): boolean {
  if (name === '_engine_run_backward') return true;
  if (
    name === 'backward' &&
    (filename.endsWith('torch/autograd/__init__.py') || filename.endsWith('torch/_tensor.py'))
  )
    return true;
  // C++ frames (stacks="all"): the engine's worker thread and generated backward nodes.
  return (
    name.startsWith('torch::autograd::Engine::') ||
    /torch::autograd::generated::\w+Backward\d*::apply/.test(name)
  );
}

/** Traits of every stack, cached by stack id; -1 = not yet computed. */
export class StackTraits {
  private readonly frames: Int32Array;
  private readonly stacks: Int32Array;

  constructor(private readonly table: StackTable) {
    this.frames = new Int32Array(table.frameCount).fill(-1);
    this.stacks = new Int32Array(table.stackCount).fill(-1);
  }

  of(stack: number): number {
    if (stack < 0) return 0;
    let t = this.stacks[stack]!;
    if (t >= 0) return t;
    t = 0;
    for (const f of this.table.stack(stack)) t |= this.frame(f);
    this.stacks[stack] = t;
    return t;
  }

  private frame(id: number): number {
    let t = this.frames[id]!;
    if (t < 0) {
      const f = this.table.frame(id);
      // Windows paths (C:\\...\\torch\\nn\\...) match the same patterns.
      t = frameTraits(f.filename.replaceAll('\\', '/'), f.name);
      this.frames[id] = t;
    }
    return t;
  }
}
