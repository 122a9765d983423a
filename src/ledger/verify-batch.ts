// The verifier thread's wire format: a batch of Ed25519 checks packed into one buffer, which is
// transferred to the worker rather than copied. Per job: the 32-byte public key, the 64-byte
// signature, the message's length in bytes (4 bytes, little-endian) and its UTF-8 bytes.
export type VerifyJob = { publicKey: Uint8Array; message: string; signature: Uint8Array };
export type PackedJob = { publicKey: Uint8Array; message: Uint8Array; signature: Uint8Array };

const KEY = 32;
const SIGNATURE = 64;
const HEADER = KEY + SIGNATURE + 4;

/** Whether a job fits the format (any other length cannot verify anyway). */
export const packable = (job: VerifyJob): boolean => job.publicKey.length === KEY && job.signature.length === SIGNATURE;

export function packJobs(jobs: VerifyJob[]): Uint8Array {
  const lengths = jobs.map((job) => Buffer.byteLength(job.message, 'utf8'));
  const bytes = Buffer.allocUnsafeSlow(lengths.reduce((sum, n) => sum + HEADER + n, 0));
  let at = 0;
  jobs.forEach((job, i) => {
    bytes.set(job.publicKey, at);
    bytes.set(job.signature, at + KEY);
    bytes.writeUInt32LE(lengths[i]!, at + KEY + SIGNATURE);
    bytes.write(job.message, at + HEADER, 'utf8');
    at += HEADER + lengths[i]!;
  });
  return bytes;
}

export function unpackJobs(bytes: Uint8Array): PackedJob[] {
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const jobs: PackedJob[] = [];
  for (let at = 0; at < view.length;) {
    const length = view.readUInt32LE(at + KEY + SIGNATURE);
    jobs.push({
      publicKey: view.subarray(at, at + KEY),
      signature: view.subarray(at + KEY, at + KEY + SIGNATURE),
      message: view.subarray(at + HEADER, at + HEADER + length),
    });
    at += HEADER + length;
  }
  return jobs;
}
