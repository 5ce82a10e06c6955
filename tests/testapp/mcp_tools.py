"""Found by autodiscovery: the test app's registered form, served by the default server."""

import mcpforms
from tests.forms import SignupForm

mcpforms.register(SignupForm, name="testapp_signup")
