/**
 * The CSS transform that puts a layer drawn for window `l` (at plot size) where the window `w`
 * on screen shows it: stretched until the worker's layer for `w` arrives. null: nothing of it is
 * in view (or the scale is beyond what the compositor draws sensibly).
 */
export function layerTransform(
  plotWidth: number,
  [l0, l1]: [number, number],
  [w0, w1]: [number, number],
): string | null {
  const scale = (l1 - l0) / (w1 - w0);
  const shift = ((l0 - w0) / (w1 - w0)) * plotWidth;
  const visible = shift < plotWidth && shift + scale * plotWidth > 0;
  if (!visible || !(scale > 0) || scale > 1e6) return null;
  return `translate(${shift}px, 0) scale(${scale}, 1)`;
}
