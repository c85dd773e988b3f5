"""Product public keys (PEM or JWK) with their key ids, imported once per process."""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any, Dict, List, Mapping, Sequence, Tuple, Union

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat, load_pem_public_key

#: A product public key: PEM (SPKI) text, or a JWK as the API returns in ``publicKeyJwk``.
PublicKey = Union[str, Mapping[str, Any]]
#: One key, or several (current and retired, to accept what was signed before a rotation).
PublicKeys = Union[PublicKey, Sequence[PublicKey]]

_imported: Dict[str, Tuple[str, Ed25519PublicKey]] = {}
_max_imported = 32


def b64url_encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _thumbprint(raw: bytes) -> str:
    # RFC 7638: the required members in lexicographic order, no white space.
    canonical = json.dumps({"crv": "Ed25519", "kty": "OKP", "x": b64url_encode(raw)}, separators=(",", ":"))
    return b64url_encode(hashlib.sha256(canonical.encode("ascii")).digest())


def _import(key: PublicKey) -> Tuple[str, Ed25519PublicKey]:
    cache_key = key if isinstance(key, str) else json.dumps(dict(key), sort_keys=True)
    known = _imported.get(cache_key)
    if known is not None:
        return known
    try:
        if isinstance(key, str):
            loaded = load_pem_public_key(key.encode("ascii"))
            if not isinstance(loaded, Ed25519PublicKey):
                raise TypeError("the PEM is not an Ed25519 key")
            raw = loaded.public_bytes(Encoding.Raw, PublicFormat.Raw)
            imported = (_thumbprint(raw), loaded)
        else:
            if key.get("kty") != "OKP" or key.get("crv") != "Ed25519" or not isinstance(key.get("x"), str):
                raise TypeError("the JWK is not an Ed25519 public key")
            x = str(key["x"])
            raw = base64.urlsafe_b64decode(x + "=" * (-len(x) % 4))
            kid = key.get("kid")
            imported = (kid if isinstance(kid, str) else _thumbprint(raw), Ed25519PublicKey.from_public_bytes(raw))
    except (ValueError, TypeError) as error:
        raise TypeError("public_key must be an Ed25519 public key as PEM (SPKI) or JWK") from error
    if len(_imported) >= _max_imported:
        _imported.clear()
    _imported[cache_key] = imported
    return imported


def key_list(keys: PublicKeys) -> List[Tuple[str, Ed25519PublicKey]]:
    """Every configured key with its id; raises TypeError for none or a key that is not Ed25519."""
    listed: Sequence[PublicKey] = [keys] if isinstance(keys, (str, Mapping)) else keys
    if len(listed) == 0:
        raise TypeError("public_key needs at least one public key")
    return [_import(key) for key in listed]
