"""URLconf of the browser tests' server: the test URLs, plus a password form that only URL mode can fill."""

from __future__ import annotations

from typing import Any

from django import forms

import mcpforms
from tests.urls import urlpatterns


class VaultForm(forms.Form):
    """Unlock a vault."""

    username = forms.CharField()
    password = forms.CharField(widget=forms.PasswordInput, min_length=8)


@mcpforms.tool(VaultForm, name="vault")
def unlock(request: Any, form: forms.BaseForm) -> str:
    return f"Vault unlocked for {form.cleaned_data['username']}."


__all__ = ["urlpatterns"]
