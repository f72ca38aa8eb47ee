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

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App client={client} files={files} early={early} />
  </StrictMode>,
);
