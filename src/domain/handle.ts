// An agent's handle: the name its public pages and reads are addressed by, chosen at creation.
// The admin API and the CLI refuse any other; the public reads and the badges answer 404 for one
// that does not match without asking the store.

export const HANDLE_PATTERN = '^[a-z0-9][a-z0-9_-]{2,31}$';
const HANDLE = new RegExp(HANDLE_PATTERN);

export const isHandle = (s: string): boolean => HANDLE.test(s);
