"""A test project whose background tools run on RQ: Django's tasks framework through django-tasks-rq, a
Redis the test starts, and a real ``rqworker`` (tests/e2e/test_background_broker.py)."""
