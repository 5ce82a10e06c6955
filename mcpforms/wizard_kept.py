"""What a wizard's page step keeps between rounds: what the user submitted on the URL-mode page, sealed for
the flow (``mcpforms.sealing``), and the same opened again by a later round of that flow.

Only what the step's form reads is kept: for each of its fields, the keys its widget reads of the POST
data and of the files (a key read as one value keeps the one the widget takes, a key read as a list keeps
them all), so a POST with more keys or files than the form has fields leaves the rest behind. The values,
and each file's name, size, content type and key, are sealed together for the row's public key and bound
to the row; each file is encrypted on its own and stored under a random name in ``sealing.file_storage()``.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django import forms
from django.core.files.storage import Storage
from django.core.files.uploadedfile import UploadedFile
from django.utils.datastructures import MultiValueDict

import mcpforms.sealing as sealing

if TYPE_CHECKING:
    from mcpforms.models import WizardPageStep

    # Generic for the type checker only (django-stubs); at run time it cannot be subscripted.
    Upload = UploadedFile[bytes]
else:
    Upload = UploadedFile

# Where the encrypted files are, each under a random name: nobody can guess one, and the user's own file
# name (which may say something about them) never reaches the storage.
UPLOADS = "mcpforms/wizard"


@dataclass(frozen=True)
class Submission:
    """What the user submitted on the page, as the step's form is bound to it."""

    data: MultiValueDict[str, Any]
    files: MultiValueDict[str, Upload]


def seal_submission(
    row: WizardPageStep,
    form: forms.BaseForm,
    *,
    data: MultiValueDict[str, Any],
    files: MultiValueDict[str, Any],
    saved: list[str],
) -> bytes:
    """What ``form``'s fields read of ``data`` and ``files``, sealed for ``row``; each file stored
    encrypted, its name appended to ``saved`` (for the caller to delete should the row not be written)."""
    posted, uploads = _Reads(data), _Reads(files)
    for name, field in form.fields.items():
        field.widget.value_from_datadict(posted, uploads, form.add_prefix(name))
    storage = sealing.file_storage()
    kept = {
        "data": posted.kept(),
        "files": {
            key: [_store(storage, upload, saved) for upload in given] for key, given in uploads.kept().items()
        },
    }
    plain = json.dumps(kept, separators=(",", ":")).encode()
    return sealing.seal(plain, bytes(row.public_key), context=_context(row))


def open_submission(row: WizardPageStep, flow_key: str) -> Submission:
    """What ``seal_submission`` kept for ``row``, opened with the flow's key; ``sealing.Unsealable`` when
    it does not open, or a file it names is no longer in the storage."""
    if row.sealed is None:
        raise sealing.Unsealable("nothing was submitted")
    plain = sealing.unseal(bytes(row.sealed), bytes(row.public_key), flow_key, context=_context(row))
    kept = json.loads(plain)
    storage = sealing.file_storage()
    files: dict[str, list[Upload]] = {}
    for key, entries in kept["files"].items():
        for entry in entries:
            if not storage.exists(entry["path"]):
                raise sealing.Unsealable(f"the file {entry['path']!r} is no longer in the file storage")
        files[key] = [StoredUpload(storage, entry) for entry in entries]
    return Submission(MultiValueDict(kept["data"]), MultiValueDict(files))


class StoredUpload(Upload):
    """A file the page kept, as the step's form and the handler read an upload (its name, size and
    content type as the user sent it); read from the storage and decrypted when first read."""

    def __init__(self, storage: Storage, entry: Mapping[str, Any]) -> None:
        self._storage, self._entry = storage, entry
        self._opened: Any = None
        super().__init__(
            None,
            name=entry["name"],
            content_type=entry.get("content_type"),
            size=entry["size"],
            charset=entry.get("charset"),
        )

    @property
    def file(self) -> Any:
        if self._opened is None:
            entry = self._entry
            with self._storage.open(entry["path"], "rb") as stored:
                self._opened = sealing.decrypt_file(
                    stored,
                    key=bytes.fromhex(entry["key"]),
                    nonce=bytes.fromhex(entry["nonce"]),
                    tag=bytes.fromhex(entry["tag"]),
                )
        return self._opened

    @file.setter
    def file(self, value: Any) -> None:
        self._opened = value


class _Reads(MultiValueDict[str, Any]):
    """Submitted data as a widget reads it, noting which keys it read: as one value (``get``, ``[]``,
    ``in``) or as a list (``getlist``)."""

    def __init__(self, source: MultiValueDict[str, Any]) -> None:
        super().__init__(dict(source.lists()))
        self.read_one: set[str] = set()
        self.read_all: set[str] = set()

    def __getitem__(self, key: str) -> Any:
        self.read_one.add(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        if isinstance(key, str):
            self.read_one.add(key)
        return super().__contains__(key)

    def getlist(self, key: str, default: Any = None) -> Any:
        self.read_all.add(key)
        return super().getlist(key, default)

    def kept(self) -> dict[str, list[Any]]:
        """What the widgets read, by key: every value of a key read as a list, else the one they took."""
        found = {}
        for key in sorted(self.read_one | self.read_all):
            values = MultiValueDict.getlist(self, key)
            if values:
                found[key] = values if key in self.read_all else values[-1:]
        return found


def _store(storage: Storage, upload: Upload, saved: list[str]) -> dict[str, Any]:
    encrypted = sealing.encrypt_file(upload.chunks())
    path = storage.save(f"{UPLOADS}/{secrets.token_urlsafe(24)}", encrypted.content)
    saved.append(path)
    return {
        "path": path,
        "name": upload.name,
        "content_type": upload.content_type,
        "size": upload.size,
        "charset": upload.charset,
        "key": encrypted.key.hex(),
        "nonce": encrypted.nonce.hex(),
        "tag": encrypted.tag.hex(),
    }


def _context(row: WizardPageStep) -> str:
    # The sealed bytes are bound to their row: copied onto another, they do not open.
    return f"mcpforms.wizard_pages.step:{row.page_id}"
