// A read thread (src/read-thread.ts) that never gets ready, as one still building its app on a
// loaded machine: it answers no message, so only being terminated stops it.
setInterval(() => undefined, 1_000);
