import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app.js';
import { servedFiles } from './served-files.js';
import { EngineClient } from './worker/client.js';
import './styles.css';

// Both started before React's first render, which they would otherwise wait on: the engine worker
// compiles its code meanwhile, and the file to open is known as soon as the page is drawn.
const client = new EngineClient();
const files = servedFiles();

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App client={client} files={files} />
  </StrictMode>,
);
