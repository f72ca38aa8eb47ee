import { readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { SnapshotError } from '../../engine/base/index.js';
import { APP_ROOT } from '../../server/static-files.js';

/**
 * The built web app (dist/web, the same files `memlens view` serves) as one HTML document with
 * nothing to fetch: its scripts and stylesheets inlined, anything they point at as a data: URL.
 * The vite build already makes the app one classic script with its engine worker inlined as a
 * blob (so it opens from file://); this only inlines what index.html still links.
 * `before` ends just before </body>: the report's manifest goes there, ahead of `script`, so the
 * app finds it when it starts, and its data after `script` (report-page.ts).
 */
export interface AppTemplate {
  before: string;
  script: string;
  after: string;
}

const LINKED = /<(script|link)\b[^>]*\b(src|href)="([^"]+)"[^>]*>(\s*<\/script>)?/gi;

const TYPES: Record<string, string> = {
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
};

export function appTemplate(root = APP_ROOT): AppTemplate {
  let html: string;
  try {
    html = readFileSync(join(root, 'index.html'), 'utf8');
  } catch {
    throw new SnapshotError('the web app is not built (run npm run build)');
  }
  const scripts: string[] = [];
  const inlined = html.replace(LINKED, (tag, kind: string, _attr: string, url: string) => {
    if (url.startsWith('data:')) return tag;
    if (kind.toLowerCase() === 'script') {
      scripts.push(scriptText(readFileSync(join(root, url), 'utf8')));
      return '';
    }
    if (/\brel="stylesheet"/i.test(tag))
      return `<style>${inlineUrls(root, url, readFileSync(join(root, url), 'utf8'))}</style>`;
    throw new SnapshotError(`the web app links ${url}, which a report cannot inline`);
  });
  const end = inlined.lastIndexOf('</body>');
  if (end < 0 || scripts.length === 0)
    throw new SnapshotError('the built web app has an unexpected index.html');
  return {
    before: inlined.slice(0, end),
    script: `<script>${scripts.join('\n')}</script>\n`,
    after: inlined.slice(end),
  };
}

/**
 * Script text safe inside an inline <script>: `</script` would end the element and `<!--` would
 * change how the HTML parser reads the rest. Escaping the slash or the bang keeps the meaning
 * wherever they can occur in JavaScript (strings, templates, regular expressions, comments).
 */
export function scriptText(js: string): string {
  return js.replace(/<\/(script)/gi, '<\\/$1').replace(/<!--/g, '<\\!--');
}

/** A stylesheet's url(...) references to the app's own files, as data: URLs. */
function inlineUrls(root: string, cssPath: string, css: string): string {
  return css.replace(/url\((['"]?)([^'")]+)\1\)/g, (whole, _q: string, url: string) => {
    if (url.startsWith('data:') || url.startsWith('#')) return whole;
    const file = join(root, cssPath, '..', url);
    const type = TYPES[extname(file)];
    if (type === undefined)
      throw new SnapshotError(`the web app's stylesheet links ${url}, which a report cannot inline`);
    return `url(data:${type};base64,${readFileSync(file).toString('base64')})`;
  });
}
