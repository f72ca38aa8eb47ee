import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';

/**
 * The app must open from disk (file://) as well as from `memlens view`. Chromium refuses module
 * scripts and module workers from file:// URLs, so the app is one classic script (iife, loaded
 * with defer) and the engine worker is inlined as a classic blob worker.
 */
function classicScript(): Plugin {
  return {
    name: 'memlens-classic-script',
    enforce: 'post',
    transformIndexHtml(html) {
      return html.replace(/<script type="module" crossorigin/g, '<script defer');
    },
  };
}

export default defineConfig({
  root: import.meta.dirname,
  base: './',
  plugins: [react(), classicScript()],
  worker: {
    format: 'iife',
    // pako (the inflater's second reading of a gzip file of several members, gunzip-members.ts)
    // builds its deflate settings' table at its top level with `new Config(…)`, which kept its
    // whole deflate half, never imported, in the worker: twice, as the inlined worker is.
    // Building that table has no other effect.
    rolldownOptions: { treeshake: { manualPureFunctions: ['Config'] } },
  },
  build: {
    outDir: '../dist/web',
    emptyOutDir: true,
    modulePreload: false,
    assetsInlineLimit: 0,
    reportCompressedSize: false,
    rolldownOptions: { output: { format: 'iife', codeSplitting: false } },
  },
});
