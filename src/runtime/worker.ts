// How the package starts its worker threads. Each worker is a module file beside the code that
// starts it, type-checked like the rest. Built, the package runs from dist/ as JavaScript; in the
// tests it runs from src/ as TypeScript under tsx. A worker's file is therefore resolved with the
// extension of the module asking for it, and a TypeScript worker first registers tsx's loader
// (tsx is a dev dependency, only ever loaded this way when running from the sources).
// This folder imports nothing of the project, and anything may import it.
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** The worker module `name` (without extension) beside the module whose `import.meta.url` is `from`. */
export function siblingModule(name: string, from: string): URL {
  return new URL(`./${name}${from.endsWith('.ts') ? '.ts' : '.js'}`, from);
}

/** Starts `entry` on a worker thread, which inherits none of the parent's command-line flags. */
export function startWorker(entry: URL, options: Omit<WorkerOptions, 'eval' | 'execArgv'> = {}): Worker {
  if (!entry.pathname.endsWith('.ts')) return new Worker(entry, { ...options, execArgv: [] });
  // `execArgv: ['--import', 'tsx']` would be plainer, but Node 20 loads the entry before such hooks.
  const tsx = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  const bootstrap = `import(${tsx}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); });`;
  return new Worker(bootstrap, { ...options, eval: true, execArgv: [] });
}
