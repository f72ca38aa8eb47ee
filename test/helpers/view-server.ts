/** The e2e tests' server and browser: the same code the web benchmark uses. */
export {
  CHROMIUM,
  CLI,
  openBrowser,
  type RunningView,
  startView,
} from '../../bench/view-session.js';
