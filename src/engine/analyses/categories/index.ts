/** The front door of analyses/categories/: what code outside the engine may use of it. */

export type { Category } from './categories.js';
export { CATEGORIES } from './categories.js';
export type { CategoryCurve, DeviceCategories } from './category-curves.js';
export { categoriesOf } from './category-curves.js';
