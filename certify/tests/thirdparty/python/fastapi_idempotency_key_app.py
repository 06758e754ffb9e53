# The order API of orders.py behind fastapi-idempotency-key 0.1.1 (PyPI),
# registered exactly as its README's Quick Start shows (global ASGI middleware,
# MemoryBackend, 24-hour TTL), to be certified by `lostreply certify`
# (certify/tests/thirdparty/fastapi-idempotency-key.yaml).
#
#   target/thirdparty-venv/bin/python fastapi_idempotency_key_app.py [PORT]
#       binds 127.0.0.1 (PORT default 0: any free port) and prints its base
#       URL alone on stdout's first line.
from fastapi_idempotency_key import IdempotencyMiddleware, MemoryBackend

from orders import app, serve

app.add_middleware(
    IdempotencyMiddleware,
    backend=MemoryBackend(),
    header_name="Idempotency-Key",
    default_ttl=86400,
)

if __name__ == "__main__":
    serve(app)
