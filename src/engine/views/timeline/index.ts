/** The front door of views/timeline/: what code outside the engine may use of it. */
export { byteTicks, decimalTicks } from './axis-ticks.js';
export { convertWindow } from './axis-window.js';
export type { HoverFacts } from './hover-facts.js';
export { hoverFacts } from './hover-facts.js';
export type { OomMark, StepMarker, TimelineAxis } from './timeline-axis.js';
export { axisExtent, hasTime, oomMarks, stepMarkers, timePositions, traceStartUs } from './timeline-axis.js';
export type { TimelineLod, TimelineRequest } from './timeline-lod.js';
export { timelineLod, timelineOutline } from './timeline-lod.js';
