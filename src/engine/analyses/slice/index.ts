/** The front door of analyses/slice/: what code outside the engine may use of it. */

export type { DeviceSlice } from './slice.js';
export { planSlice } from './slice.js';
export type { SliceRequest } from './slice-window.js';
