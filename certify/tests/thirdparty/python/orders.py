# A tiny order API for certifying the Python idempotency middlewares from
# outside: the routes only record effects; the middleware each app file puts in
# front of them does all the idempotency. Shared by fastapi_idempotency_key_app.py
# and fastapi_idempotency_app.py so both are certified against the same API.
#
# Routes (creates want `Authorization: Bearer <tenant>`):
#   POST /v1/orders          create {title, amount, currency, client_reference}: 201 {id, ...};
#                            an amount over MAX_AMOUNT is refused with 422 (a rejection)
#   POST /v1/orders_slow     the same create, answered after SLOW_S (a request met in flight)
#   POST /v1/invoices        another create, for the same-key-on-another-endpoint probe
#   POST /v1/orders_fail     the same create, committed, then answered 500 (an error after the commit)
#   GET  /v1/orders/{id}     the tenant's own order, else 404
#   GET  /_effects?marker=X  ground truth: {"count": N}, every effect carrying the marker, any tenant
import asyncio
import itertools
import socket
import sys

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

MAX_AMOUNT = 100000
SLOW_S = 2.0
# Bounds: the app is a test fixture, but nothing in it grows without limit.
MAX_EFFECTS = 20000

effects = []  # every effect, in creation order
ids = itertools.count(1)

app = FastAPI()


def tenant_of(request: Request):
    auth = request.headers.get("authorization", "")
    if auth.startswith("Bearer ") and 0 < len(auth) - 7 <= 200 and " " not in auth[7:]:
        return auth[7:]
    return None


async def create(request: Request, resource: str, delay_s: float = 0.0, fail_after_commit: bool = False):
    tenant = tenant_of(request)
    if tenant is None:
        return JSONResponse({"error": "Authorization: Bearer <tenant> required"}, status_code=401)
    body = await request.json()
    amount = body.get("amount") if isinstance(body, dict) else None
    if not isinstance(amount, (int, float)) or amount > MAX_AMOUNT:
        return JSONResponse({"error": f"amount must be a number up to {MAX_AMOUNT}"}, status_code=422)
    if len(effects) >= MAX_EFFECTS:
        return JSONResponse({"error": f"the fixture holds at most {MAX_EFFECTS} objects"}, status_code=507)
    if delay_s:
        await asyncio.sleep(delay_s)
    order = {
        "id": f"{resource}_{next(ids)}",
        "object": resource,
        "tenant": tenant,
        "title": str(body.get("title", "")),
        "amount": amount,
        "currency": str(body.get("currency", "")),
        "client_reference": str(body.get("client_reference", "")),
    }
    effects.append(order)
    if fail_after_commit:
        return JSONResponse({"error": "internal error after the order was saved"}, status_code=500)
    return JSONResponse(order, status_code=201)


@app.post("/v1/orders")
async def create_order(request: Request):
    return await create(request, "order")


@app.post("/v1/orders_slow")
async def create_order_slow(request: Request):
    return await create(request, "order", delay_s=SLOW_S)


@app.post("/v1/invoices")
async def create_invoice(request: Request):
    return await create(request, "invoice")


@app.post("/v1/orders_fail")
async def create_order_then_fail(request: Request):
    return await create(request, "order", fail_after_commit=True)


@app.get("/v1/orders/{order_id}")
async def retrieve_order(order_id: str, request: Request):
    tenant = tenant_of(request)
    for order in effects:
        if order["id"] == order_id and order["tenant"] == tenant:
            return order
    return JSONResponse({"error": "no such order"}, status_code=404)


@app.get("/_effects")
async def count_effects(marker: str):
    return {"count": sum(1 for o in effects if o["client_reference"] == marker)}


def serve(asgi_app):
    """Binds 127.0.0.1 (port argv[1], default 0: any free port), listens, prints
    the base URL alone on stdout's first line, then serves: a client that reads
    the line connects to a socket already listening."""
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    print(f"http://127.0.0.1:{sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(asgi_app, log_level="warning", access_log=False)
    uvicorn.Server(config).run(sockets=[sock])
