// A local stand-in for the Bitcoin chain, for the anchor simulators. It mines blocks over given
// transactions (real 80-byte headers, real double-SHA-256 transaction merkle trees, regtest
// difficulty so a nonce is found at once) and gives the OpenTimestamps ops from a txid to a
// block's merkle root. Test fixture only: nothing under src/ imports it.

import { createHash, randomBytes } from 'node:crypto';
import { concatBytes, type Op } from '../../src/method/ots/codec.ts';
import { blockHash, meetsOwnTarget, parseBlockHeader } from '../../src/method/ots/verify.ts';

export type SimBlock = { height: number; hash: string; header: Uint8Array; txids: Uint8Array[] };

/** regtest's easiest target: about every second nonce meets it */
const REGTEST_BITS = 0x207fffff;

export function sha256d(b: Uint8Array): Uint8Array {
  const once = createHash('sha256').update(b).digest();
  return new Uint8Array(createHash('sha256').update(once).digest());
}

/** A one-input, one-output legacy transaction paying nothing to `OP_RETURN <data>`, split around the data. */
export function opReturnTransaction(data: Uint8Array): { prefix: Uint8Array; suffix: Uint8Array } {
  if (data.length > 75) throw new RangeError('OP_RETURN data over 75 bytes needs a longer push');
  const prefix = concatBytes(
    Uint8Array.of(2, 0, 0, 0), // version 2
    Uint8Array.of(1), // one input
    new Uint8Array(randomBytes(32)), // previous txid
    Uint8Array.of(0, 0, 0, 0), // previous output index
    Uint8Array.of(0), // empty scriptSig
    Uint8Array.of(0xff, 0xff, 0xff, 0xff), // sequence
    Uint8Array.of(1), // one output
    new Uint8Array(8), // value 0
    Uint8Array.of(data.length + 2, 0x6a, data.length), // script length, OP_RETURN, push
  );
  return { prefix, suffix: Uint8Array.of(0, 0, 0, 0) }; // locktime
}

export class SimChain {
  readonly blocks: SimBlock[] = [];
  constructor(readonly startHeight = 900_000) {}

  get tip(): SimBlock | undefined {
    return this.blocks.at(-1);
  }

  byHeight(height: number): SimBlock | undefined {
    return this.blocks.find((b) => b.height === height);
  }

  byHash(hash: string): SimBlock | undefined {
    return this.blocks.find((b) => b.hash === hash);
  }

  /** Mines a block holding a coinbase-like filler and the given transactions, in that order. */
  mine(transactions: Uint8Array[]): SimBlock {
    const txids = [sha256d(new Uint8Array(randomBytes(60))), ...transactions.map(sha256d)];
    const prev = this.tip ? reverse(Buffer.from(this.tip.hash, 'hex')) : new Uint8Array(32);
    const time = Math.floor(Date.now() / 1000);
    const header = new Uint8Array(80);
    const view = new DataView(header.buffer);
    view.setUint32(0, 0x20000000, true);
    header.set(prev, 4);
    header.set(merkleRoot(txids), 36);
    view.setUint32(68, time, true);
    view.setUint32(72, REGTEST_BITS, true);
    for (let nonce = 0; ; nonce++) {
      view.setUint32(76, nonce, true);
      const parsed = parseBlockHeader(header);
      if (parsed.ok && meetsOwnTarget(parsed.value)) break;
    }
    const block = { height: this.tip ? this.tip.height + 1 : this.startHeight, hash: blockHash(header), header, txids };
    this.blocks.push(block);
    return block;
  }
}

/** Bitcoin's merkle root over txids (serialisation order), the last node of an odd level doubled. */
export function merkleRoot(txids: Uint8Array[]): Uint8Array {
  let level = txids;
  while (level.length > 1) level = nextLevel(level);
  return level[0]!;
}

/** The ops that take txid number `index` of the block to its merkle root. */
export function merklePathOps(txids: Uint8Array[], index: number): Op[] {
  const ops: Op[] = [];
  let level = txids;
  let i = index;
  while (level.length > 1) {
    const sibling = level[i ^ 1] ?? level[i]!;
    ops.push(i % 2 === 0 ? { kind: 'append', arg: sibling } : { kind: 'prepend', arg: sibling }, { kind: 'sha256' }, { kind: 'sha256' });
    level = nextLevel(level);
    i = Math.floor(i / 2);
  }
  return ops;
}

function nextLevel(level: Uint8Array[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let i = 0; i < level.length; i += 2) out.push(sha256d(concatBytes(level[i]!, level[i + 1] ?? level[i]!)));
  return out;
}

function reverse(b: Uint8Array): Uint8Array {
  return Uint8Array.from(b).reverse();
}
