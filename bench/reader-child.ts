// The hostile reader, run as a child process: autocannon over BENCH_READER's requests, then its
// answers by status (and connection errors) as one JSON line on stdout. A process of its own, so
// the writer whose latency the benchmark measures does not share an event loop with the reader's
// 64 connections: the writes' timings are the server's, not the load generator's.
import autocannon, { type Request } from 'autocannon';

type ReaderJob = { url: string; connections: number; seconds: number; requests: Request[] };

const job = JSON.parse(process.env.BENCH_READER ?? '') as ReaderJob;
const result = await autocannon({ url: job.url, connections: job.connections, duration: job.seconds, pipelining: 1, timeout: 10, requests: job.requests });
const statusCodes = Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, s]) => [code, s.count]));
process.stdout.write(`${JSON.stringify({ statusCodes, errors: result.errors })}\n`);
