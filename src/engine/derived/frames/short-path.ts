import type { FrameLike } from './frame-kinds.js';

const PACKAGES = /[\\/](site|dist)-packages[\\/]/i;

/**
 * A source path short enough for a table cell, still telling files apart: a library's path from
 * its package on, with an ellipsis for the middle (torch/…/modules/module.py), else its last two
 * components (…/nanogpt/model.py). Windows paths keep their backslashes.
 */
export function shortPath(path: string): string {
  const sep = path.includes('\\') && !path.includes('/') ? '\\' : '/';
  const m = PACKAGES.exec(path);
  const parts = (m ? path.slice(m.index + m[0].length) : path).split(/[\\/]/);
  const tail = parts.slice(-2).join(sep);
  if (m) return parts.length <= 3 ? parts.join(sep) : `${parts[0]}${sep}…${sep}${tail}`;
  return parts.length <= 3 ? path : `…${sep}${tail}`;
}

/**
 * "name (…/dir/file.py:12)": how reports and views name one frame; a C++ frame the unwinder
 * found no source for ('??', '') is its name alone, and without a line its file alone.
 * `fullPath` keeps the path and the C++ signature whole (CSV cells); else both are shortened.
 */
export function formatFrame(f: FrameLike, opts: { fullPath?: boolean } = {}): string {
  const name = opts.fullPath ? f.name : shortName(f.name);
  const where = frameWhere(f, opts);
  return where === '' ? name : `${name} (${where})`;
}

/** "…/dir/file.py:12", "Functions.cpp" without a line, '' without a source file. */
export function frameWhere(f: FrameLike, opts: { fullPath?: boolean } = {}): string {
  if (f.filename === '' || f.filename === '??') return '';
  const file = opts.fullPath ? f.filename : shortPath(f.filename);
  return f.line > 0 ? `${file}:${f.line}` : file;
}

const LONG_TEMPLATE = 24;

/**
 * A C++ symbol without its return type, parameter list, long template arguments and clone
 * suffix: the function is what tells frames apart (at::native::mul(…),
 * wrap_kernel_functor_unboxed_<…>::call(…)). Python names pass unchanged.
 */
export function shortName(name: string): string {
  if (!name.includes('(') && !name.includes('<')) return name;
  const groups = collapseGroups(name.replace(/ \[clone [^\]]*\]$/, ''));
  if (groups === null) return name;
  // The return type ends at the last space outside brackets ("void ns::f<…>(…)", "at::Tensor at::f(…)").
  const space = lastTopLevelSpace(groups);
  return space < 0 || /\boperator$/.test(groups.slice(0, space)) ? groups : groups.slice(space + 1);
}

/** Parameter lists to (…) and long template arguments to <…>; null when brackets do not balance. */
function collapseGroups(name: string): string | null {
  let out = '';
  let depth = 0;
  let start = 0;
  for (let i = 0; i < name.length; i++) {
    const c = name[i]!;
    if (c === '<' || c === '(') {
      if (depth === 0) start = i;
      depth++;
    } else if ((c === '>' || c === ')') && depth > 0) {
      depth--;
      if (depth === 0) {
        const group = name.slice(start, i + 1);
        out += c === ')' ? parens(group) : group.length > LONG_TEMPLATE ? '<…>' : group;
      }
    } else if (depth === 0) out += c;
  }
  return depth === 0 ? out.replace(/ const$/, '') : null;
}

function parens(group: string): string {
  return group === '()' || group === '(anonymous namespace)' ? group : '(…)';
}

function lastTopLevelSpace(s: string): number {
  let depth = 0;
  let at = -1;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '<' || c === '(') depth++;
    else if ((c === '>' || c === ')') && depth > 0) depth--;
    else if (c === ' ' && depth === 0) at = i;
  }
  return at;
}
