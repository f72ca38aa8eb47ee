/** The front door of views/flame/: what code outside the engine may use of it. */

export type { FlameTree } from './flame-tree.js';
export { allocationsUnder, flameTree, NO_STACK_FRAME, ROOT_FRAME } from './flame-tree.js';
