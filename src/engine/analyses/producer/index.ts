/** The front door of analyses/producer/: what code outside the engine may use of it. */
export { inProducerWords, jsonInProducerWords } from './wording.js';
