"""URLconf of the OAuth clients' server (``test_oauth_clients.py``): the demo's, plus ``scoped_note``, a
form tool that needs the scope ``notes`` besides the base one, so a client has to ask for more (step-up),
and which answers with the username it ran as.

Imported by that server process only (as its ROOT_URLCONF), never by the test run: the tool lands on
that process's default server, not on the one the rest of the suite lists.
"""

from __future__ import annotations

from typing import Any

from django import forms

import mcpforms
from mcpforms.protocol import RequestContext
from project.urls import urlpatterns

NOTES_SCOPE = "notes"


class NoteForm(forms.Form):
    note = forms.CharField(max_length=200)


@mcpforms.tool(NoteForm, scope=NOTES_SCOPE, description="Keep a note; needs the notes scope.")
def scoped_note(request: RequestContext, form: forms.Form) -> dict[str, Any]:
    return {"note": form.cleaned_data["note"], "user": request.user.get_username()}


__all__ = ["urlpatterns"]
