#!/usr/bin/python3
# Writes python-view.json: how python-opentimestamps (Debian's python3-opentimestamps) reads each
# example, so the TypeScript codec is checked against a second, independent reader.
# Run from this directory: /usr/bin/python3 python-view.py > python-view.json
import glob, json, warnings
from opentimestamps.core.timestamp import DetachedTimestampFile
from opentimestamps.core.serialize import BytesDeserializationContext, BytesSerializationContext
from opentimestamps.core.notary import PendingAttestation, BitcoinBlockHeaderAttestation, UnknownAttestation

warnings.simplefilter('ignore')

def describe(att):
    if isinstance(att, PendingAttestation): return {'kind': 'pending', 'uri': att.uri}
    if isinstance(att, BitcoinBlockHeaderAttestation): return {'kind': 'bitcoin', 'height': att.height}
    if isinstance(att, UnknownAttestation): return {'kind': 'unknown', 'tag': att.TAG.hex(), 'payload': att.payload.hex()}
    return {'kind': 'unknown', 'tag': att.TAG.hex(), 'name': type(att).__name__}

out = {}
for path in sorted(glob.glob('**/*.ots', recursive=True)):
    data = open(path, 'rb').read()
    try:
        f = DetachedTimestampFile.deserialize(BytesDeserializationContext(data))
    except Exception as e:
        out[path] = {'error': type(e).__name__}
        continue
    ctx = BytesSerializationContext()
    f.serialize(ctx)
    atts = [dict(describe(a), message=m.hex()) for m, a in f.timestamp.all_attestations()]
    atts.sort(key=lambda a: json.dumps(a, sort_keys=True))
    out[path] = {
        'file_hash_op': f.file_hash_op.TAG_NAME,
        'file_digest': f.file_digest.hex(),
        'reserializes_identically': ctx.getbytes() == data,
        'attestations': atts,
    }
print(json.dumps(out, indent=1, sort_keys=True))
