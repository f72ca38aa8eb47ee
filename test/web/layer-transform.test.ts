import { describe, expect, it } from 'vitest';
import { layerTransform } from '../../web/src/timeline/layer-transform.js';

/**
 * A pan/zoom frame moves the last layer with a CSS transform instead of repainting it: the
 * transform must put every axis value where the window on screen shows it.
 */
describe('the layer transform of a pan/zoom frame', () => {
  const W = 1304;
  /** Where the transform puts layer pixel u: translate(t px, 0) scale(s, 1) with origin 0 0. */
  const apply = (css: string, u: number): number => {
    const m = /^translate\((-?[\d.e+-]+)px, 0\) scale\(([\d.e+-]+), 1\)$/.exec(css);
    expect(m).not.toBeNull();
    return Number(m![1]) + Number(m![2]) * u;
  };
  const cases: [string, [number, number], [number, number]][] = [
    ['the same window', [100, 200], [100, 200]],
    ['panned right', [100, 200], [130, 230]],
    ['panned left', [100, 200], [60, 160]],
    ['zoomed in', [0, 750_745], [374_997.1275, 375_747.8725]],
    ['zoomed out', [1000, 2000], [0, 10_000]],
    ['time axis, microseconds', [1.7e15, 1.7e15 + 5e6], [1.7e15 + 1e6, 1.7e15 + 3e6]],
  ];
  for (const [name, layer, view] of cases) {
    it(`${name}: each axis value lands on the screen pixel of the window's`, () => {
      const css = layerTransform(W, layer, view)!;
      for (const f of [0, 0.25, 0.5, 0.9, 1]) {
        const v = layer[0] + f * (layer[1] - layer[0]);
        const onLayer = f * W;
        const onScreen = ((v - view[0]) / (view[1] - view[0])) * W;
        expect(apply(css, onLayer)).toBeCloseTo(onScreen, 3);
      }
    });
  }

  it('a layer wholly outside the window is not shown', () => {
    expect(layerTransform(W, [0, 100], [200, 300])).toBeNull();
    expect(layerTransform(W, [500, 600], [200, 300])).toBeNull();
    expect(layerTransform(W, [0, 100], [0, 100])).not.toBeNull();
  });
});
