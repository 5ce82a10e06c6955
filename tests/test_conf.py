from __future__ import annotations

import pytest
from django.test import override_settings

from mcpforms.conf import DEFAULTS, conf


def test_defaults_apply_without_a_setting():
    assert DEFAULTS["STATE_MAX_AGE"] == conf.STATE_MAX_AGE


def test_settings_are_read_on_every_access():
    with override_settings(MCPFORMS={"STATE_MAX_AGE": 5}):
        assert conf.STATE_MAX_AGE == 5
    assert DEFAULTS["STATE_MAX_AGE"] == conf.STATE_MAX_AGE


def test_a_malformed_setting_falls_back_to_defaults_and_is_left_to_the_checks():
    with override_settings(MCPFORMS="nonsense"):
        assert DEFAULTS["MAX_MODEL_CHOICES"] == conf.MAX_MODEL_CHOICES


def test_unknown_names_list_the_valid_ones():
    with pytest.raises(AttributeError, match="valid: STATE_MAX_AGE"):
        conf.STATE_MAX_AGES  # noqa: B018
