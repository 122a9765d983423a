// A log line repeated by a background job (the same failure every turn) is written once a minute,
// not once a turn; a different line is written at once.

/** `write`, passing the same message on at most once every `everyMs` (a minute). */
export function throttled(write: (message: string) => void, everyMs = 60_000, now: () => number = Date.now): (message: string) => void {
  let last = '';
  let at = -Infinity;
  return (message) => {
    if (message === last && now() - at < everyMs) return;
    last = message;
    at = now();
    write(message);
  };
}
