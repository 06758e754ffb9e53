# The order API of orders.py behind fastapi-idempotency 0.1.1 (PyPI), with its
# default MemoryStore, registered as its README shows, to be certified by
# `lostreply certify` in two set-ups the README describes:
#   ip      the default scope ("By default, requests are grouped by client IP"),
#           certify/tests/thirdparty/fastapi-idempotency-ip.yaml
#   bearer  a `scope` function grouping by the caller's credential, as the
#           README advises for a logged-in API,
#           certify/tests/thirdparty/fastapi-idempotency-bearer.yaml
#
#   target/thirdparty-venv/bin/python fastapi_idempotency_app.py PORT ip|bearer
#       binds 127.0.0.1 (PORT 0: any free port) and prints its base URL alone
#       on stdout's first line.
import sys

from fastapi_idempotency import IdempotencyMiddleware
from starlette.requests import Request

from orders import app, serve


def scope(request: Request) -> str:
    # The README's example groups by session, else by IP; this API's callers
    # are known by their bearer credential.
    auth = request.headers.get("authorization")
    return f"bearer:{auth}" if auth else f"ip:{request.client.host}"


if __name__ == "__main__":
    scoping = sys.argv[2] if len(sys.argv) > 2 else "ip"
    if scoping == "ip":
        app.add_middleware(IdempotencyMiddleware)
    elif scoping == "bearer":
        app.add_middleware(IdempotencyMiddleware, scope=scope)
    else:
        sys.exit(f"scoping is ip or bearer, not {scoping!r}")
    serve(app)
