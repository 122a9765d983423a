// The anchor view's schema, shared by /v1/anchors, /v1/transparency and /v1/proof.
import { Type } from '@sinclair/typebox';

const nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

export const AnchorView = Type.Object({
  tree_size: Type.Integer({ description: 'The anchored checkpoint\'s tree size.' }),
  root: Type.String({ description: 'The checkpoint\'s root hash, base64 as in the checkpoint.' }),
  status: Type.Union([Type.Literal('pending'), Type.Literal('confirmed')], { description: 'confirmed once a Bitcoin attestation was checked against its block header.' }),
  calendars: Type.Array(Type.String(), { description: 'The OpenTimestamps calendars that timestamped it.' }),
  created_at: Type.String({ format: 'date-time' }),
  block_height: Type.Union([Type.Integer(), Type.Null()]),
  block_hash: nullable(Type.String({ description: 'Display order (as explorers print it).' })),
  block_merkle_root: nullable(Type.String({ description: 'The header\'s merkle root, display order; the attestation\'s message is its reverse.' })),
  block_time: nullable(Type.String({ format: 'date-time' })),
  ots_url: Type.String({ format: 'uri', description: 'The .ots file (application/vnd.opentimestamps.v1).' }),
}, { description: 'A Bitcoin anchor of one checkpoint: an OpenTimestamps file whose digest is SHA-256 of the checkpoint body (its three lines, without signatures).' });

