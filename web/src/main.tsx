import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app.js';
import { earlyLoad } from './first-load.js';
import { servedFiles } from './served-files.js';
import { EngineClient } from './worker/client.js';
import './styles.css';

// All started before React's first render, which they would otherwise wait on: the engine worker
// compiles its code meanwhile, the file list is fetched, and the first file is asked for once it is in.
const client = new EngineClient();
const files = servedFiles();
const early = earlyLoad(client, files);

/**
 * React's first render holds the main thread for tens of milliseconds, and the file list's answer
 * waited behind it (1 GB trace, served: the list's response at 205 ms, read at 250 ms, after the
 * first render): the app is drawn once the first file is asked for, or after FIRST_DRAW_WAIT_MS
 * from a server slow to list its files.
 */
const FIRST_DRAW_WAIT_MS = 100;
Promise.race([early.catch(() => null), new Promise((r) => setTimeout(r, FIRST_DRAW_WAIT_MS))]).then(() =>
  createRoot(document.getElementById('root')!).render(
    <StrictMode>
      <App client={client} files={files} early={early} />
    </StrictMode>,
  ),
);
