// Types for the part of autocannon's programmatic API the benchmarks use (it ships none).
declare module 'autocannon' {
  export type RequestParams = {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
  };

  export type Request = RequestParams & {
    setupRequest?: (request: RequestParams, context: object) => RequestParams | null;
    onResponse?: (status: number, body: string, context: object, headers: Record<string, string>) => void;
  };

  export type Options = {
    url: string;
    connections?: number;
    duration?: number;
    amount?: number;
    pipelining?: number;
    timeout?: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    requests?: Request[];
    title?: string;
  };

  export type Histogram = {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    total: number;
    p50: number;
    p90: number;
    p97_5: number;
    p99: number;
  };

  export type Result = {
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    resets: number;
    '2xx': number;
    '4xx': number;
    '5xx': number;
    statusCodeStats: Record<string, { count: number }>;
    latency: Histogram & { totalCount: number };
    requests: Histogram & { sent: number };
    throughput: Histogram;
  };

  export type Instance = PromiseLike<Result> & { stop: () => void };

  function autocannon(options: Options): Instance;
  export default autocannon;
}
