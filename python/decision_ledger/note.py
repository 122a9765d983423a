"""C2SP signed notes, Ed25519 vkeys, log_v1 checkpoints and tlog-proof@v1 text (docs/log.md)."""
from __future__ import annotations

import base64
import binascii
import hashlib
import re
from dataclasses import dataclass

from .signing import verify_ed25519

_SIGNATURE_LINE = re.compile(r"\u2014 (\S+) (\S+)")


class NoteError(ValueError):
    """A note, vkey, checkpoint or tlog-proof is malformed or its signature does not verify."""


def b64decode_strict(text: str) -> bytes:
    try:
        data = base64.b64decode(text, validate=True)
    except binascii.Error as exc:
        raise NoteError(f"not base64: {text[:60]!r}") from exc
    if base64.b64encode(data).decode("ascii") != text:
        raise NoteError(f"not canonical base64: {text[:60]!r}")
    return data


@dataclass(frozen=True)
class Verifier:
    name: str
    key_id: bytes
    public_key: bytes


def key_id(name: str, public_key: bytes) -> bytes:
    return hashlib.sha256(name.encode("utf-8") + b"\n\x01" + public_key).digest()[:4]


def parse_vkey(vkey: str) -> Verifier:
    """`<name>+<8 hex key id>+<base64(0x01 || Ed25519 public key)>`."""
    parts = vkey.strip().split("+", 2)  # the base64 key may itself hold "+"
    if len(parts) != 3 or not re.fullmatch(r"[0-9a-f]{8}", parts[1]):
        raise NoteError("a vkey is <name>+<8 hex digits>+<base64 key>")
    name, hex_id, encoded = parts
    key = b64decode_strict(encoded)
    if len(key) != 33 or key[0] != 0x01:
        raise NoteError("not an Ed25519 note key (type 0x01, 32 bytes)")
    verifier = Verifier(name, bytes.fromhex(hex_id), key[1:])
    if key_id(name, verifier.public_key) != verifier.key_id:
        raise NoteError("the vkey's key id does not match its name and key")
    return verifier


@dataclass(frozen=True)
class Signature:
    name: str
    key_id: bytes
    signature: bytes


def split_note(note: str) -> tuple[str, list[Signature]]:
    """The signed text (ending in a newline) and the note's signature lines."""
    cut = note.rfind("\n\n")
    if cut < 0 or not note.endswith("\n"):
        raise NoteError("a signed note is text, a blank line and signature lines")
    text, lines = note[: cut + 1], note[cut + 2 :].split("\n")[:-1]
    signatures = []
    for line in lines:
        match = _SIGNATURE_LINE.fullmatch(line)
        if match is None:
            raise NoteError(f"malformed signature line: {line[:80]!r}")
        raw = b64decode_strict(match.group(2))
        if len(raw) < 5:
            raise NoteError("signature too short")
        signatures.append(Signature(match.group(1), raw[:4], raw[4:]))
    if not signatures:
        raise NoteError("a signed note has at least one signature")
    return text, signatures


def verify_note(note: str, verifier: Verifier) -> str:
    """The note's text when a signature by `verifier` verifies; other signatures are ignored."""
    text, signatures = split_note(note)
    for signature in signatures:
        if signature.name == verifier.name and signature.key_id == verifier.key_id:
            if verify_ed25519(verifier.public_key, signature.signature, text.encode("utf-8")):
                return text
            raise NoteError(f"the signature of {verifier.name} does not verify")
    raise NoteError(f"the note carries no signature by {verifier.name}")


@dataclass(frozen=True)
class Checkpoint:
    origin: str
    size: int
    root: bytes
    extensions: tuple[str, ...] = ()


def parse_checkpoint(text: str) -> Checkpoint:
    """The checkpoint body: origin, tree size, base64 root, optional extension lines."""
    lines = text.split("\n")
    if len(lines) < 4 or lines[-1] != "":
        raise NoteError("a checkpoint is origin, size and root lines")
    origin, size, root = lines[0], lines[1], lines[2]
    if not origin or not re.fullmatch(r"0|[1-9][0-9]{0,19}", size):
        raise NoteError("malformed checkpoint origin or size")
    root_bytes = b64decode_strict(root)
    if len(root_bytes) != 32:
        raise NoteError("a checkpoint root is 32 bytes")
    return Checkpoint(origin, int(size), root_bytes, tuple(lines[3:-1]))


def open_checkpoint(note: str, verifier: Verifier | None) -> Checkpoint:
    """Parses a signed checkpoint, verifying it first when a verifier (the log's vkey) is given."""
    text = verify_note(note, verifier) if verifier is not None else split_note(note)[0]
    checkpoint = parse_checkpoint(text)
    if verifier is not None and checkpoint.origin != verifier.name:
        raise NoteError(f"checkpoint origin {checkpoint.origin} is not the key name {verifier.name}")
    return checkpoint


@dataclass(frozen=True)
class TlogProof:
    index: int
    hashes: tuple[bytes, ...]
    checkpoint_note: str


def parse_tlog_proof(text: str) -> TlogProof:
    """C2SP tlog-proof@v1: header, `index N`, base64 hashes, a blank line, the signed checkpoint."""
    head, sep, note = text.partition("\n\n")
    lines = head.split("\n")
    if not sep or lines[0] != "c2sp.org/tlog-proof@v1" or len(lines) < 2:
        raise NoteError("not a c2sp.org/tlog-proof@v1 text")
    match = re.fullmatch(r"index (0|[1-9][0-9]*)", lines[1])
    if match is None:
        raise NoteError("malformed tlog-proof index line")
    return TlogProof(int(match.group(1)), tuple(b64decode_strict(h) for h in lines[2:]), note)
