// A tiny order API behind express-idempotency 1.0.6 with its built-in
// in-memory adapter, configured as the package's README shows
// (`app.post(..., idempotency())`, `isHit(req)` in the handler). It exists to
// be certified by `lostreply certify` (certify/tests/thirdparty/express.yaml).
//
//   node app.js [PORT]     binds 127.0.0.1 (PORT default 0: any free port) and
//                          prints its base URL alone on stdout's first line.
//
// Routes (every route wants `Authorization: Bearer <tenant>`):
//   POST /v1/orders            create {title, amount, currency, client_reference}: 201 {id, ...};
//                              an amount over MAX_AMOUNT is refused with 422
//   POST /v1/orders_slow       the same create, answered after SLOW_MS (a request met in flight)
//   POST /v1/invoices          another create, for the same-key-on-another-endpoint probe
//   POST /v1/orders_fail       the same create, saved, then answered 500 (an error after the commit)
//   GET  /v1/orders/:id        the tenant's order, else 404
//   GET  /v1/orders?client_reference=X | ?limit=N   the tenant's orders: {data: [...]}
'use strict';

const express = require('express');
const { idempotency, getSharedIdempotencyService } = require('express-idempotency');

const MAX_AMOUNT = 100000;
const SLOW_MS = 2000;
// Bounds: the app is a test fixture, but nothing in it grows without limit.
const MAX_ORDERS = 20000;
const MAX_LIST = 100;

const orders = []; // every effect, in creation order
let nextId = 1;

function tenantOf(req) {
  const auth = req.get('authorization') || '';
  const m = /^Bearer (\S{1,200})$/.exec(auth);
  return m ? m[1] : null;
}

const app = express();
app.disable('x-powered-by');
app.use(express.json({ limit: '64kb' }));
app.use((req, res, next) => {
  const tenant = tenantOf(req);
  if (!tenant) {
    return res.status(401).json({ error: 'Authorization: Bearer <tenant> required' });
  }
  req.tenant = tenant;
  return next();
});
// As the README: the middleware in front of every POST.
app.post('*', idempotency());

function create(resource, delayMs, failAfterSaving = false) {
  return (req, res) => {
    if (getSharedIdempotencyService().isHit(req)) {
      return; // the middleware answered (a replay)
    }
    const body = req.body || {};
    const amount = Number(body.amount);
    if (!Number.isFinite(amount) || amount > MAX_AMOUNT) {
      return res.status(422).json({ error: `amount must be a number up to ${MAX_AMOUNT}` });
    }
    if (orders.length >= MAX_ORDERS) {
      return res.status(507).json({ error: 'the fixture holds at most ' + MAX_ORDERS + ' objects' });
    }
    const finish = () => {
      const order = {
        id: `${resource}_${nextId++}`,
        object: resource,
        tenant: req.tenant,
        title: String(body.title ?? ''),
        amount,
        currency: String(body.currency ?? ''),
        client_reference: String(body.client_reference ?? ''),
      };
      orders.push(order);
      if (failAfterSaving) {
        res.status(500).json({ error: 'the order was saved, then the request failed' });
      } else {
        res.status(201).json(order);
      }
    };
    if (delayMs > 0) {
      setTimeout(finish, delayMs);
    } else {
      finish();
    }
  };
}

app.post('/v1/orders', create('order', 0));
app.post('/v1/orders_slow', create('order', SLOW_MS));
app.post('/v1/invoices', create('invoice', 0));
app.post('/v1/orders_fail', create('order', 0, true));

app.get('/v1/orders/:id', (req, res) => {
  const order = orders.find((o) => o.id === req.params.id && o.tenant === req.tenant);
  if (!order) {
    return res.status(404).json({ error: 'no such order' });
  }
  return res.json(order);
});

app.get('/v1/orders', (req, res) => {
  const mine = orders.filter((o) => o.tenant === req.tenant && o.object === 'order');
  if (typeof req.query.client_reference === 'string') {
    return res.json({ data: mine.filter((o) => o.client_reference === req.query.client_reference) });
  }
  const limit = Math.max(1, Math.min(MAX_LIST, Number(req.query.limit) || MAX_LIST));
  return res.json({ data: mine.slice(-limit).reverse() });
});

// Errors the middleware passes on (409 in flight, 417 misuse) as JSON, with
// the status the middleware set.
// eslint-disable-next-line no-unused-vars
app.use((err, req, res, next) => {
  const status = res.statusCode >= 400 ? res.statusCode : err.status || 500;
  res.status(status).json({ error: err.message });
});

const port = Number(process.argv[2] || 0);
const server = app.listen(port, '127.0.0.1', () => {
  process.stdout.write(`http://127.0.0.1:${server.address().port}\n`);
});