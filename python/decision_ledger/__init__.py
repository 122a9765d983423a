"""decision_ledger: a Python client and an independent canon_v1 / log_v1 verifier."""
from .canon import CanonError, JsonNumber, canonical_bytes, canonical_text, canonicalise_json, read_json
from .decimal_text import DecimalTextError, normalise_decimal
from .decision import ContentError, decision_content
from .hashes import chain_entry, chain_hash, content_hash

__version__ = "0.1.0"
__all__ = [
    "CanonError", "ContentError", "DecimalTextError", "JsonNumber", "canonical_bytes", "canonical_text",
    "canonicalise_json", "chain_entry", "chain_hash", "content_hash", "decision_content",
    "normalise_decimal", "read_json", "__version__",
]

from ._core import RetryPolicy, Signer, decision_payload
from .aio import AsyncLedgerClient
from .client import LedgerClient
from .errors import LedgerApiError, LedgerError, LedgerNetworkError, LedgerValidationError
from .signing import MissingCryptography, SigningKey

__all__ += [
    "AsyncLedgerClient", "LedgerApiError", "LedgerClient", "LedgerError", "LedgerNetworkError",
    "LedgerValidationError", "MissingCryptography", "RetryPolicy", "Signer", "SigningKey", "decision_payload",
]
