/** The front door of analyses/check/: what code outside the engine may use of it. */

export type { Baseline } from './baseline.js';
export { BaselineError, baselineOf, parseBaseline } from './baseline.js';
export type { Budgets } from './budgets.js';
export { BudgetError, parseBudgets } from './budgets.js';
export type { CheckResult } from './check.js';
export { checkSubject } from './check.js';
export { fragmentationPlace, measure } from './check-figures.js';
export { checkAnnotations, checkJunit, checkMarkdown, checkText } from './check-formats.js';
export type { CheckSubject } from './check-subject.js';
