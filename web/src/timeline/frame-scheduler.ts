/** Calls `draw` once in the next animation frame however many times it is asked for before then. */
export function frameScheduler(draw: () => void): () => void {
  let pending = 0;
  return () => {
    if (pending !== 0) return;
    pending = requestAnimationFrame(() => {
      pending = 0;
      draw();
    });
  };
}
