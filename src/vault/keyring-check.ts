// Knowing, before anything is sealed or sent, that the vault's keyring opens what it sealed.
// It owns the check value of a key (an HMAC-SHA256 of a constant under it: it proves which key
// without revealing it), and the start-time verification against the database: every version the
// keyring holds must match the check recorded for it (a version seen for the first time must open
// the secrets already sealed under it, then its check is recorded), and every version the data is
// sealed under must be in the keyring. Messages name versions, never key material.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { VaultStore } from './port.ts';
import { sealedAad, unseal, type Keyring, type VaultResult } from './vault.ts';

const CHECK_CONSTANT = 'decision-ledger master key check v1';

/** The check value of one key version: base64url of HMAC-SHA256(key, constant). */
export function keyCheckValue(key: Buffer): string {
  return createHmac('sha256', key).update(CHECK_CONSTANT).digest('base64url');
}

function sameCheck(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

const refuse = (message: string): VaultResult<never> => ({ ok: false, error: { code: 'open_failed', message } });

const mismatch = (version: number) => refuse(
  `key version ${version} is not the key this database's secrets were sealed with (its check value differs): set the keyring they were sealed with`,
);

/**
 * Verifies the keyring against the database and records the check of each version seen for the
 * first time. Safe to run on several nodes at once: the first check recorded for a version wins,
 * and a node holding another key for it is refused.
 */
export async function verifyKeyring(ring: Keyring, vault: VaultStore, at: string): Promise<VaultResult<void>> {
  const [checks, samples] = await Promise.all([vault.keyChecks(), vault.sealedSamples()]);
  const missing = [...new Set(samples.map((s) => s.keyVersion))].filter((v) => !ring.all.has(v)).sort((a, b) => a - b);
  if (missing.length > 0) {
    return refuse(`the database holds secrets sealed under key version ${missing.join(', ')}, which the keyring does not hold: add ${missing.length > 1 ? 'them' : 'it'} back`);
  }
  for (const [version, key] of [...ring.all].sort((a, b) => a[0] - b[0])) {
    const value = keyCheckValue(key);
    const recorded = checks.get(version);
    if (recorded !== undefined) {
      if (!sameCheck(recorded, value)) return mismatch(version);
      continue;
    }
    // Secrets sealed before checks were kept: the version's key must open them.
    for (const s of samples.filter((x) => x.keyVersion === version)) {
      const opened = unseal(ring, sealedAad(s.owner, s.id), s.sealed);
      if (!opened.ok) return refuse(`key version ${version} does not open the secrets sealed under it (${opened.error.code}): set the keyring they were sealed with`);
    }
    await vault.addKeyCheck(version, value, at);
    const won = (await vault.keyChecks()).get(version);
    if (won === undefined || !sameCheck(won, value)) return mismatch(version);
  }
  return { ok: true, value: undefined };
}
