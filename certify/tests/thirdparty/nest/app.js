// A tiny order API behind @node-idempotency/nestjs 1.0.4 with its memory
// storage, configured as the package's README shows
// (`NodeIdempotencyModule.forRootAsync({storage: {adapter: memory}})` and
// `@Idempotent()` on the controller). It exists to be certified by
// `lostreply certify` (certify/tests/thirdparty/nest.yaml). Plain JavaScript:
// the decorators a TypeScript build would apply are applied by hand, so the
// app runs on node with no build step. The handlers only record effects.
//
//   node app.js [PORT]     binds 127.0.0.1 (PORT default 0: any free port) and
//                          prints its base URL alone on stdout's first line.
//
// Routes (creates want `Authorization: Bearer <tenant>`):
//   POST /v1/orders          create {title, amount, currency, client_reference}: 201 {id, ...};
//                            an amount over MAX_AMOUNT is refused with 422 (a rejection)
//   POST /v1/orders_slow     the same create, answered after SLOW_MS (a request met in flight)
//   POST /v1/invoices        another create, for the same-key-on-another-endpoint probe
//   POST /v1/orders_fail     the same create, committed, then answered 500 (an error after the commit)
//   GET  /v1/orders/:id      the tenant's own order, else 404
//   GET  /_effects?marker=X  ground truth: {"count": N}, every effect carrying the marker, any tenant
'use strict';

require('reflect-metadata');
const {
  Controller, Get, HttpCode, InternalServerErrorException, Module, NotFoundException,
  Post, Req, UnauthorizedException, UnprocessableEntityException,
} = require('@nestjs/common');
const { NestFactory } = require('@nestjs/core');
const { Idempotent, NodeIdempotencyModule, StorageAdapterEnum } = require('@node-idempotency/nestjs');

const MAX_AMOUNT = 100000;
const SLOW_MS = 2000;
// Bounds: the app is a test fixture, but nothing in it grows without limit.
const MAX_EFFECTS = 20000;

const effects = []; // every effect, in creation order
let nextId = 1;

function tenantOf(req) {
  const m = /^Bearer (\S{1,200})$/.exec(req.headers.authorization || '');
  return m ? m[1] : null;
}

async function create(req, resource, { delayMs = 0, failAfterCommit = false } = {}) {
  const tenant = tenantOf(req);
  if (!tenant) {
    throw new UnauthorizedException('Authorization: Bearer <tenant> required');
  }
  const body = req.body || {};
  const amount = body.amount;
  if (typeof amount !== 'number' || amount > MAX_AMOUNT) {
    throw new UnprocessableEntityException(`amount must be a number up to ${MAX_AMOUNT}`);
  }
  if (effects.length >= MAX_EFFECTS) {
    throw new InternalServerErrorException(`the fixture holds at most ${MAX_EFFECTS} objects`);
  }
  if (delayMs > 0) {
    await new Promise((resolve) => setTimeout(resolve, delayMs));
  }
  const order = {
    id: `${resource}_${nextId++}`,
    object: resource,
    tenant,
    title: String(body.title ?? ''),
    amount,
    currency: String(body.currency ?? ''),
    client_reference: String(body.client_reference ?? ''),
  };
  effects.push(order);
  if (failAfterCommit) {
    throw new InternalServerErrorException('internal error after the order was saved');
  }
  return order;
}

class OrdersController {
  createOrder(req) { return create(req, 'order'); }
  createOrderSlow(req) { return create(req, 'order', { delayMs: SLOW_MS }); }
  createInvoice(req) { return create(req, 'invoice'); }
  createOrderThenFail(req) { return create(req, 'order', { failAfterCommit: true }); }
}

class ReadbackController {
  retrieve(req) {
    const tenant = tenantOf(req);
    const order = effects.find((o) => o.id === req.params.id && o.tenant === tenant);
    if (!order) {
      throw new NotFoundException('no such order');
    }
    return order;
  }
  count(req) {
    const marker = String(req.query.marker ?? '');
    return { count: effects.filter((o) => o.client_reference === marker).length };
  }
}

// `decorators` are applied to `method` of `cls`, as TypeScript would, with
// `@Req()` on its first parameter.
function route(cls, method, ...decorators) {
  const proto = cls.prototype;
  Req()(proto, method, 0);
  const descriptor = Object.getOwnPropertyDescriptor(proto, method);
  for (const decorate of decorators.reverse()) {
    decorate(proto, method, descriptor);
  }
  Object.defineProperty(proto, method, descriptor);
}

route(OrdersController, 'createOrder', Post('orders'), HttpCode(201));
route(OrdersController, 'createOrderSlow', Post('orders_slow'), HttpCode(201));
route(OrdersController, 'createInvoice', Post('invoices'), HttpCode(201));
route(OrdersController, 'createOrderThenFail', Post('orders_fail'), HttpCode(201));
// As the README: the whole controller is idempotent, with the module's options.
Idempotent()(OrdersController);
Controller('v1')(OrdersController);

route(ReadbackController, 'retrieve', Get('v1/orders/:id'));
route(ReadbackController, 'count', Get('_effects'));
Controller()(ReadbackController);

class AppModule {}
Module({
  imports: [
    NodeIdempotencyModule.forRootAsync({ storage: { adapter: StorageAdapterEnum.memory } }),
  ],
  controllers: [OrdersController, ReadbackController],
})(AppModule);

async function main() {
  const app = await NestFactory.create(AppModule, { logger: false });
  const port = Number(process.argv[2] || 0);
  await app.listen(port, '127.0.0.1');
  process.stdout.write(`http://127.0.0.1:${app.getHttpServer().address().port}\n`);
}

main().catch((err) => {
  process.stderr.write(`${err.stack || err}\n`);
  process.exit(1);
});
