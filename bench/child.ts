// The child-process side of the harness (harness.ts startChild), shared by every server under
// test: announces the address over IPC, answers the parent's questions about the event loop,
// stops gracefully on SIGTERM and exits when the benchmark goes away.
import { performance } from 'node:perf_hooks';

export type ChildQuestion = 'event-loop';
/** Time the event loop spent idle and active so far (performance.eventLoopUtilization). */
export type EventLoopTimes = { idle: number; active: number };

export function serveAsChild(url: string, stop: () => Promise<void>): void {
  process.send?.({ ready: url });
  process.on('message', (question: ChildQuestion) => {
    if (question !== 'event-loop') return;
    const { idle, active } = performance.eventLoopUtilization();
    process.send?.({ eventLoop: { idle, active } satisfies EventLoopTimes });
  });
  process.on('SIGTERM', () => void stop().then(() => process.exit(0)));
  process.on('disconnect', () => process.exit(0)); // the benchmark went away
}
