"""What the server keeps for a flow between its rounds, sealed so that only a round of that flow opens it.

A wizard's step filled on the URL-mode page (``mcpforms.wizard_pages``) stays on the server until the flow
ends: a password, a file, what the user typed. The page never sees the flow's requestState, so it cannot
hold the key that opens what it keeps: it seals it for a public key instead, with HPKE (RFC 9180, base
mode: DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, AES-256-GCM). The private key is derived from a secret
that only the flow's requestState carries (``RequestState.flow_key``) and the signing key
(``protocol.tokens``): the database, which holds the public key and the sealed bytes, opens nothing, nor
does a requestState a 2025-era session store keeps beside them, without the server's key.

Each file is encrypted with AES-256-GCM (NIST SP 800-38D) under a random key and nonce of its own, which
the sealed values hold, and stored under a random name in a storage of its own
(``MCPFORMS["WIZARD_FILE_STORAGE"]``), private by default.

It takes the ``cryptography`` package, 47 or later (``mcpforms[wizard-pages]``): ``available()`` says
whether it is installed, and ``mcpforms.E417`` reports a wizard that needs it.
"""

from __future__ import annotations

import importlib.util
import secrets
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import IO, TYPE_CHECKING

from django.conf import settings
from django.core.files import File
from django.core.files.storage import FileSystemStorage, InvalidStorageError, Storage, storages

from mcpforms.conf import WIZARD_FILES_ALIAS, conf
from mcpforms.protocol.tokens import keyed_hmac, signing_keys

if TYPE_CHECKING:
    from cryptography.hazmat.primitives import hpke
    from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

# cryptography is imported where a seal is made or opened, never with this module: its OpenSSL bindings
# cost every worker some 7 MiB, and only a wizard with a page step ever seals anything.

#: The release of ``cryptography`` that brought HPKE (``mcpforms[wizard-pages]``).
CRYPTOGRAPHY_AT_LEAST = "47"
# One salt per purpose (tokens.py): the flow key is never the key of anything else.
KEY_SALT = "mcpforms.sealing.flow_key"
# The private folder of the default file storage, in the system's temporary directory.
PRIVATE_FOLDER = "mcpforms-wizard-files"
_CHUNK = 64 * 1024


class Unsealable(Exception):
    """Sealed bytes or a file that this flow's key does not open: another flow's, a signing key rotated out
    of the fallbacks since, or tampered. What was kept is lost; the step is asked again."""


@lru_cache(maxsize=1)
def available() -> bool:
    """Whether ``cryptography`` (with HPKE) is installed, which a wizard's page steps need; without
    ``mcpforms[wizard-pages]``, a wizard with a page step fails its checks (``mcpforms.E417``). Found,
    not imported."""
    try:
        return importlib.util.find_spec("cryptography.hazmat.primitives.hpke") is not None
    except ImportError:  # no cryptography at all: find_spec imports the parent packages
        return False


def new_flow_key() -> str:
    """A fresh secret for a flow's requestState: 256 random bits."""
    return secrets.token_urlsafe(32)


def public_key(flow_key: str) -> bytes:
    """The public key what the page keeps for the flow of ``flow_key`` is sealed for (32 bytes)."""
    return _private_key(flow_key, signing_keys()[0]).public_key().public_bytes_raw()


def seal(data: bytes, recipient: bytes, *, context: str) -> bytes:
    """``data`` sealed for the public key ``recipient``, bound to ``context`` (what it is kept for)."""
    from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PublicKey

    return _suite().encrypt(data, X25519PublicKey.from_public_bytes(recipient), info=context.encode())


def unseal(sealed: bytes, recipient: bytes, flow_key: str, *, context: str) -> bytes:
    """Open what ``seal`` made for ``recipient`` with the flow's key; raise ``Unsealable`` otherwise.

    The private key is derived with the signing key the public key was made with: the current one, or one
    it rotated from (``STATE_KEY_FALLBACKS``, ``SECRET_KEY_FALLBACKS``).
    """
    from cryptography.exceptions import InvalidTag

    for key in signing_keys():
        private = _private_key(flow_key, key)
        if private.public_key().public_bytes_raw() == recipient:  # a public key: no secret to time
            try:
                return _suite().decrypt(sealed, private, info=context.encode())
            except (InvalidTag, ValueError):
                raise Unsealable("the sealed bytes do not open") from None
    raise Unsealable("sealed for another flow key, or with a signing key no longer trusted")


@dataclass(frozen=True)
class SealedFile:
    """A file encrypted for storage: its ciphertext, and what opens it (kept with the sealed values)."""

    content: File[bytes]
    key: bytes
    nonce: bytes
    tag: bytes


def encrypt_file(chunks: Iterable[bytes]) -> SealedFile:
    """Encrypt a file read in ``chunks`` under a key and a nonce of its own, into a temporary file (kept in
    memory up to ``FILE_UPLOAD_MAX_MEMORY_SIZE``, as Django keeps an upload)."""
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    key, nonce = secrets.token_bytes(32), secrets.token_bytes(12)
    encryptor = Cipher(algorithms.AES(key), modes.GCM(nonce)).encryptor()
    spooled = _spooled()
    for chunk in chunks:
        spooled.write(encryptor.update(chunk))
    spooled.write(encryptor.finalize())
    spooled.seek(0)
    return SealedFile(File(spooled), key=key, nonce=nonce, tag=encryptor.tag)


def decrypt_file(stored: IO[bytes], *, key: bytes, nonce: bytes, tag: bytes) -> IO[bytes]:
    """The file ``encrypt_file`` made, decrypted into a temporary file; ``Unsealable`` when it was changed.
    No byte is handed out before the tag verified them all."""
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    decryptor = Cipher(algorithms.AES(key), modes.GCM(nonce, tag)).decryptor()
    spooled = _spooled()
    for chunk in iter(lambda: stored.read(_CHUNK), b""):
        spooled.write(decryptor.update(chunk))
    try:
        spooled.write(decryptor.finalize())
    except InvalidTag:
        spooled.close()
        raise Unsealable("the stored file was changed") from None
    spooled.seek(0)
    return spooled


def file_storage() -> Storage:
    """Where the page keeps files: the ``STORAGES`` alias ``WIZARD_FILE_STORAGE`` names; while ``STORAGES``
    has no alias of the default name, a folder only the server's user may read, in the system's temporary
    directory, served by no URL."""
    alias = conf.WIZARD_FILE_STORAGE
    try:
        return storages[alias]
    except InvalidStorageError:
        if alias != WIZARD_FILES_ALIAS or alias in settings.STORAGES:
            raise  # a name the project chose: mcpforms.E203 reports it
    return _private_storage(str(Path(tempfile.gettempdir()) / PRIVATE_FOLDER))


@lru_cache(maxsize=4)
def _private_storage(location: str) -> Storage:
    return FileSystemStorage(location=location, file_permissions_mode=0o600, directory_permissions_mode=0o700)


@lru_cache(maxsize=1)
def _suite() -> hpke.Suite:  # built on first use: cryptography may not be installed
    from cryptography.hazmat.primitives import hpke

    return hpke.Suite(hpke.KEM.X25519, hpke.KDF.HKDF_SHA256, hpke.AEAD.AES_256_GCM)


def _private_key(flow_key: str, signing_key: str | bytes) -> X25519PrivateKey:
    # HMAC-SHA256 under the signing key: 32 uniformly random bytes, which X25519 clamps (RFC 7748 §5).
    from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

    derived = keyed_hmac(KEY_SALT, flow_key, signing_key).digest()
    return X25519PrivateKey.from_private_bytes(derived)


def _spooled() -> tempfile.SpooledTemporaryFile[bytes]:
    return tempfile.SpooledTemporaryFile(max_size=settings.FILE_UPLOAD_MAX_MEMORY_SIZE)
