"""A Django form as an MCP prompt: ``prompts/get`` asks for the fields, then returns the filled messages."""

from __future__ import annotations

import string
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from django import forms

from mcpforms.fields import fields_for_form
from mcpforms.flow import Asking, Declined, FormFlow, NeedsPage, Ready, Refused, Showing, run
from mcpforms.protocol.context import RequestContext
from mcpforms.protocol.errors import invalid_params
from mcpforms.protocol.primitives import Prompt, PromptArgument
from mcpforms.tools import (
    RegistrationError,
    anonymous_shut_out,
    check_convertible,
    check_name,
    default_name,
    describe_form,
    holds,
)


@dataclass(frozen=True)
class FormPrompt:
    """A form whose filled values complete a prompt template."""

    name: str
    form_class: type[forms.BaseForm]
    template: str | Callable[[dict[str, Any]], str]
    title: str
    description: str
    message: str
    #: The permission a caller needs, as ``app_label.codename``; None for none.
    permission: str | None = None

    def may_use(self, request: RequestContext) -> bool:
        """Whether this request may list, get and complete the prompt: as a tool's ``may_use``, an
        anonymous caller only where its server opens the prompt, then the permission."""
        return not anonymous_shut_out(request, self.name) and holds(request, self.permission)

    @cached_property
    def prompt(self) -> Prompt:
        arguments = tuple(
            PromptArgument(auto.name, description=auto.description or auto.label, required=False)
            for auto in fields_for_form(self.form_class)
            if not auto.page_only
        )
        return Prompt(
            name=self.name,
            title=self.title,
            description=self.description,
            handler=self.get,
            arguments=arguments,
            visible=self.may_use,
        )

    def get(self, ctx: RequestContext, arguments: dict[str, str]) -> dict[str, Any]:
        """One round of ``prompts/get``: the filled messages, or the fields still needed."""
        flow = FormFlow(self.form_class, key=self.name, message=self.message)
        match run(flow, ctx, arguments, confirm_label=f"the {self.title} form"):
            case Ready() as ready:
                return self.messages(ready_data(ready))
            case Asking(result=result):
                return result
            case Refused(text=text) | Declined(text=text):
                raise invalid_params(text)
            case NeedsPage() | Showing():
                # A prompt has no retry that could pick up a page's outcome, and no UI.
                raise invalid_params(
                    f"The {self.title} prompt needs a password or file, which prompts cannot take."
                )

    def messages(self, data: dict[str, Any]) -> dict[str, Any]:
        """The GetPromptResult of the template filled with ``data``."""
        text = self.template(data) if callable(self.template) else self.template.format_map(data)
        return {
            "description": self.description,
            "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
        }


def ready_data(ready: Ready) -> dict[str, Any]:
    """Cleaned data with None shown as an empty string, as a prompt template wants it."""
    return {name: "" if value is None else value for name, value in ready.form.cleaned_data.items()}


def form_prompt(
    form_class: type[forms.BaseForm],
    *,
    template: str | Callable[[dict[str, Any]], str],
    name: str | None = None,
    title: str | None = None,
    description: str | None = None,
    message: str | None = None,
    permission: str | None = None,
) -> FormPrompt:
    """Build (and check) the prompt for ``form_class`` whose messages are ``template`` filled with its data.

    ``template`` is a ``str.format`` string over the field names, or a function of the cleaned data.
    """
    check_convertible(form_class)
    if isinstance(template, str):
        named = {part[1] for part in string.Formatter().parse(template) if part[1]}
        unknown = named - set(getattr(form_class, "base_fields", {}))
        if unknown:
            raise RegistrationError(f"Prompt template names unknown fields: {', '.join(sorted(unknown))}.")
    prompt_name = default_name(form_class) if name is None else name
    check_name(prompt_name, kind="Prompt")
    prompt_title = title or prompt_name.replace("_", " ").capitalize()
    form_prompt = FormPrompt(
        name=prompt_name,
        form_class=form_class,
        template=template,
        title=prompt_title,
        description=describe_form(form_class, description or "", prompt_title),
        message=message or f"Please fill in: {prompt_title}",
        permission=permission,
    )
    return form_prompt
