#!/usr/bin/env python3
"""A deliberately naive adapter (protocol v1, per-call form), for judging
`lostreply run --upstream` from outside: it keeps nothing but the last answer,
sends a fresh idempotency key on every attempt, calls a lost answer a failure
and answers `reconcile` by creating again. Every one of these is a flaw the
invariants must catch in front of a real service.

    naive_adapter.py CALL    (the request JSON on stdin, the reply on stdout)
"""
import json
import os
import sys
import urllib.error
import urllib.request
import uuid


def create(request, operation_id, args, resource):
    provider = request["provider"]
    body = dict(args)
    body["client_reference"] = operation_id
    header = provider["contract"]["idempotency"]["header"]
    http = urllib.request.Request(
        f"{provider['base_url']}/v1/{resource}",
        data=json.dumps(body).encode(),
        method="POST",
        headers={
            "Authorization": f"Bearer {provider['credential']}",
            "Content-Type": "application/json",
            header: f"naive-{uuid.uuid4().hex}",
        },
    )
    try:
        with urllib.request.urlopen(http, timeout=request["client_timeout_ms"] / 1000) as answer:
            created = json.loads(answer.read())
            return {"operation_id": operation_id, "outcome": "succeeded",
                    "provider_ref": created.get("id"), "needs_review": False,
                    "evidence": f"{answer.status} answer"}
    except Exception as error:  # the flaw: no answer is taken for no effect
        return {"operation_id": operation_id, "outcome": "failed", "provider_ref": None,
                "needs_review": False, "evidence": f"failed: {error}"}


def main():
    call = sys.argv[1]
    request = json.load(sys.stdin)
    state = os.path.join(os.environ["LOSTREPLY_STATE_DIR"], "naive.json")
    saved = json.load(open(state)) if os.path.exists(state) else {}
    if call == "execute":
        op = request["operation"]
        saved[op["id"]] = {"args": op["args"], "resource": op["resource"]}
        reply = create(request, op["id"], op["args"], op["resource"])
    elif call == "reconcile":
        op_id = request["operation_id"]
        known = saved.get(op_id)
        if known is None:
            reply = {"operation_id": op_id, "outcome": "unknown", "provider_ref": None,
                     "needs_review": True, "evidence": "no record"}
        else:
            reply = create(request, op_id, known["args"], known["resource"])
    elif call in ("status", "resolve"):
        op_id = request["operation_id"]
        reply = saved.get(op_id, {}).get("last") or {
            "operation_id": op_id, "outcome": "unknown", "provider_ref": None,
            "needs_review": False, "evidence": "no record"}
    else:
        print(json.dumps({"accepted": False}))
        return 0
    if call in ("execute", "reconcile"):
        saved[reply["operation_id"]]["last"] = reply
    json.dump(saved, open(state, "w"))
    print(json.dumps(reply))
    return 0


if __name__ == "__main__":
    sys.exit(main())
