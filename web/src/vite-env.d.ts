/** Vite's `?worker&inline` import: a Worker constructor with the worker bundled into it. */
declare module '*?worker&inline' {
  const WorkerConstructor: new () => Worker;
  export default WorkerConstructor;
}

declare module '*.css';
