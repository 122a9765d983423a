// A private key file written once: whole to a private temporary file (mode 0600, fsynced), then
// linked into place. link() refuses an existing name, so of two processes starting together one
// creates the file and the other is told it exists, and reads it.
// This folder imports nothing of the project, and anything may import it.
import { mkdirSync } from 'node:fs';
import { link, open, unlink } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { dirname } from 'node:path';

/** Creates `path` with `text` unless it exists: 'created', 'exists', or the errno code that stopped it. */
export async function createKeyFileOnce(path: string, text: string): Promise<'created' | 'exists' | { code: string }> {
  const temp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    mkdirSync(dirname(path), { recursive: true });
    const handle = await open(temp, 'wx', 0o600);
    try {
      await handle.writeFile(text, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await link(temp, path);
    return 'created';
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? 'error';
    return code === 'EEXIST' ? 'exists' : { code };
  } finally {
    await unlink(temp).catch(() => undefined);
  }
}
