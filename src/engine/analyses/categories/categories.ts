import { annotationWindows, type EntryWindows } from '../../derived/iterations/annotation-windows.js';
import { FREED_BEFORE_WINDOW } from '../../model/allocations.js';
import type { DeviceModel, Snapshot } from '../../model/snapshot.js';
import { FRAMEWORK_RULES } from './category-frameworks.js';
import { StackTraits, Trait } from './category-rules.js';

export const CATEGORIES = [
  'parameter',
  'gradient',
  'optimizer_state',
  'activation',
  'temporary',
  'unknown',
] as const;
export type Category = (typeof CATEGORIES)[number];

/** An allocation freed within this many trace entries of its alloc, with no other rule, is temporary. */
export const SHORT_LIVED_ENTRIES = 16;

/**
 * The rules, in the order they are tried; the first that matches labels the allocation. Frames
 * come first (they name the code; a framework's frames before the generic ones they run under),
 * annotations next (files recorded without stacks), lifetime last.
 */
export const RULES: readonly { id: string; category: Category; says: string }[] = [
  ...FRAMEWORK_RULES.map(({ id, category, says }) => ({ id, category, says })),
  {
    id: 'module-to-device',
    category: 'parameter',
    says: 'allocated in nn.Module._apply/.to/.cuda (model moved to the GPU)',
  },
  {
    id: 'module-init',
    category: 'parameter',
    says: 'allocated in a model or layer constructor (__init__, reset_parameters, create_weights)',
  },
  { id: 'load-state-dict', category: 'parameter', says: 'allocated in load_state_dict (weights loaded)' },
  {
    id: 'weight-init',
    category: 'parameter',
    says: 'allocated in a weight initialiser (init_weight, init_weights, init_weight_list, _init_weights), kept',
  },
  {
    id: 'weight-init-freed',
    category: 'temporary',
    says: 'allocated in a weight initialiser, freed again (initialisation buffer)',
  },
  {
    id: 'load-weights',
    category: 'parameter',
    says: 'allocated while loading weights (from_pretrained, load_checkpoint, load_state_dict, dist_checkpointing load), kept',
  },
  {
    id: 'load-weights-freed',
    category: 'temporary',
    says: 'allocated while loading weights, freed again (read or merge buffer)',
  },
  {
    id: 'optimizer-init',
    category: 'optimizer_state',
    says: 'allocated in torch.optim _init_group or an optimizer constructor (state, fp32 main params)',
  },
  { id: 'accumulate-grad', category: 'gradient', says: 'allocated by AccumulateGrad (a .grad)' },
  { id: 'freed-by-zero-grad', category: 'gradient', says: 'freed by zero_grad' },
  { id: 'backward-alive', category: 'gradient', says: 'allocated in backward, still allocated at dump' },
  {
    id: 'backward-freed',
    category: 'temporary',
    says: 'allocated in backward, freed again (backward temporary)',
  },
  {
    id: 'optimizer-alive',
    category: 'optimizer_state',
    says: 'allocated in torch.optim, still allocated at dump',
  },
  {
    id: 'optimizer-freed',
    category: 'temporary',
    says: 'allocated in torch.optim, freed again (step temporary)',
  },
  { id: 'clip-grad', category: 'temporary', says: 'allocated in torch.nn.utils.clip_grad (gradient norms)' },
  {
    id: 'saved-for-backward',
    category: 'activation',
    says: 'allocated outside backward, freed by the autograd engine (saved for backward)',
  },
  {
    id: 'forward-alive',
    category: 'activation',
    says: 'allocated in a module forward, still allocated at dump',
  },
  {
    id: 'forward-freed',
    category: 'temporary',
    says: 'allocated in a module forward, freed outside backward',
  },
  { id: 'zero-grad-window', category: 'gradient', says: 'freed inside an Optimizer.zero_grad annotation' },
  {
    id: 'optimizer-step-window',
    category: 'optimizer_state',
    says: 'allocated inside an Optimizer.step annotation, outlives it',
  },
  {
    id: 'before-first-step',
    category: 'parameter',
    says: 'allocated before the first ProfilerStep, never freed',
  },
  { id: 'short-lived', category: 'temporary', says: `freed within ${SHORT_LIVED_ENTRIES} trace entries` },
  {
    id: 'no-rule',
    category: 'unknown',
    says: 'no rule matched (no telling frames, annotations or lifetime)',
  },
];
const RULE = Object.fromEntries(RULES.map((r, i) => [r.id, i])) as Record<string, number>;
const CATEGORY_OF_RULE = Uint8Array.from(RULES, (r) => CATEGORIES.indexOf(r.category));

/** Per allocation (ids of `Allocations`): the rule that labelled it; its category follows from the rule. */
export interface Labels {
  rule: Uint8Array;
  category: Uint8Array;
}

export function labelAllocations(s: Snapshot, d: DeviceModel): Labels {
  const ruleOf = labeller(s, d);
  const rule = new Uint8Array(d.allocations.count);
  for (let id = 0; id < rule.length; id++) rule[id] = ruleOf(id);
  return { rule, category: rule.map((r) => CATEGORY_OF_RULE[r]!) };
}

/** The category of one allocation, by the rules `labelAllocations` applies to every one. */
export function categoryLabeller(s: Snapshot, d: DeviceModel): (id: number) => number {
  const ruleOf = labeller(s, d);
  return (id) => CATEGORY_OF_RULE[ruleOf(id)]!;
}

/** The rule (index into RULES) that labels an allocation: its frames, then annotations, then lifetime. */
function labeller(s: Snapshot, d: DeviceModel): (id: number) => number {
  const a = d.allocations;
  const traits = new StackTraits(s.stacks);
  const windows = annotationWindows(s, d);
  return (id) => {
    const freedAt = a.freeRequested[id]!;
    const freed = freedAt >= 0 || freedAt === FREED_BEFORE_WINDOW;
    const alloc = traits.of(a.stack[id]!);
    const free = freedAt >= 0 ? traits.of(d.trace.stack[freedAt]!) : 0;
    return (
      byFrames(alloc, free, freed) ??
      byAnnotations(windows, a.start[id]!, freedAt, freed) ??
      (freedAt >= 0 && a.start[id]! >= 0 && freedAt - a.start[id]! <= SHORT_LIVED_ENTRIES
        ? RULE['short-lived']!
        : RULE['no-rule']!)
    );
  };
}

function byFrames(alloc: number, free: number, freed: boolean): number | undefined {
  for (const r of FRAMEWORK_RULES) if (alloc & r.trait) return RULE[r.id];
  if (alloc & Trait.moduleToDevice) return RULE['module-to-device'];
  if (alloc & Trait.moduleInit) return RULE['module-init'];
  if (alloc & Trait.loadState) return RULE['load-state-dict'];
  // An optimizer's state loaded from a checkpoint runs under load_checkpoint too: its frames decide.
  if (!(alloc & (Trait.optimizer | Trait.optimizerInit))) {
    if (alloc & Trait.weightInit) return freed ? RULE['weight-init-freed'] : RULE['weight-init'];
    if (alloc & Trait.loadWeights) return freed ? RULE['load-weights-freed'] : RULE['load-weights'];
  }
  if (alloc & Trait.optimizerInit) return RULE['optimizer-init'];
  if (alloc & Trait.accumulateGrad) return RULE['accumulate-grad'];
  if (free & Trait.zeroGrad) return RULE['freed-by-zero-grad'];
  if (alloc & Trait.backward) return freed ? RULE['backward-freed'] : RULE['backward-alive'];
  if (alloc & Trait.optimizer) return freed ? RULE['optimizer-freed'] : RULE['optimizer-alive'];
  if (alloc & Trait.clipGrad) return RULE['clip-grad'];
  if (free & Trait.backward) return RULE['saved-for-backward'];
  if (alloc & Trait.forward) return freed ? RULE['forward-freed'] : RULE['forward-alive'];
  return undefined;
}

function byAnnotations(w: EntryWindows, start: number, freedAt: number, freed: boolean): number | undefined {
  if (freedAt >= 0 && w.inside(w.zeroGrad, freedAt)) return RULE['zero-grad-window'];
  if (start >= 0 && w.inside(w.optimizerStep, start)) {
    const end = w.endOf(w.optimizerStep, start);
    if (!freed || freedAt > end) return RULE['optimizer-step-window'];
  }
  if (!freed && w.firstStep >= 0 && start < w.firstStep) return RULE['before-first-step'];
  return undefined;
}
