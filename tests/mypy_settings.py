"""The settings the django-stubs plugin reads while mypy checks the package, its tests and the demo at once
(pyproject.toml): every app whose models the checked code uses. No test runs on them."""

from tests.settings import *  # noqa: F403
from tests.settings import INSTALLED_APPS

# Without autodiscovery: the test app and the demo each register a tool named "signup", and mypy needs
# their models, not their tools.
INSTALLED_APPS = [
    *("mcpforms.apps.SimpleMcpFormsConfig" if app == "mcpforms" else app for app in INSTALLED_APPS),
    "project.demo",
]
