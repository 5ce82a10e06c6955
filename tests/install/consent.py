"""The browser of the sign-in walk-through, without a browser: what ``webbrowser.open`` runs in the SDK
script of docs/howto/access.md when ``BROWSER`` names ``consent.sh``. It signs in at the site's own login
(the admin's, ``LOGIN_URL = "admin:login"``), approves the consent page as it is, and follows the
redirect to the script's loopback callback, as a person's browser would.

Usage: ``python -m tests.install.consent URL``, with ``CONSENT_USER`` and ``CONSENT_PASSWORD`` set.
"""

from __future__ import annotations

import os
import sys
from urllib.parse import urlsplit

from tests.conformance.oauth_site import ConsentBrowser, deliver


def main(url: str) -> None:
    parts = urlsplit(url)
    browser = ConsentBrowser(
        f"{parts.scheme}://{parts.netloc}/",
        username=os.environ["CONSENT_USER"],
        password=os.environ["CONSENT_PASSWORD"],
    )
    try:
        location = browser.approve(url)
        print("consent answered", location.split("?")[0], flush=True)
        delivered = deliver(location)
        print("callback answered", delivered.status_code, flush=True)
    finally:
        browser.close()


if __name__ == "__main__":
    main(sys.argv[1])
