/**
 * A finished traceback: the value of a `frames` key anywhere in the snapshot, as a stack id. The
 * decoder makes these and the model reads them, so the class lives below both.
 */
export class StackRef {
  constructor(readonly id: number) {}
}
