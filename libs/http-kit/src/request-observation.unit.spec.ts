import { Router } from 'express';
import request from 'supertest';
import { addRequestMetricAttributes, createLogger, startMetrics, stopMetrics } from '@udp/telemetry';
import { collectingReader } from '@udp/test-kit';
import { serviceHttpApp } from './service-app';

const collected = collectingReader();
beforeAll(() => startMetrics({ serviceName: 'test', readers: [collected.reader] }));
afterAll(() => stopMetrics());

/** Parts that are always up: these apps test the edge, not /health/. */
const health = { store: { ping: async () => true }, readModels: { ping: async () => true }, projectors: [] };
function app() {
  const a = Router();
  a.get('/things/:id', (req, res) => res.json({ id: req.params.id }));
  a.get('/endpoints/:name', (req, res) => {
    addRequestMetricAttributes(res, { 'service.endpoint': req.params.name, 'service.component': 'first' });
    addRequestMetricAttributes(res, { 'service.component': 'second' });
    res.json({});
  });
  a.post('/things', (_req, res) => res.status(201).json({}));
  a.get('/crash', () => {
    throw new Error('boom');
  });
  return serviceHttpApp({ logger: createLogger('svc-a', 'silent'), maxBodyBytes: 64, health, publicRoutes: [a] });
}

const durations = () => collected.points('http.server.request.duration');

describe('http.server.request.duration', () => {
  it('is recorded for every request, whatever answered it, with method, route, status and the app', async () => {
    // Given a service app
    const a = app();
    // When it answers routes, a 404, a body too large, a malformed path, a crash and an unknown method
    for (const id of ['1', '2', '3']) await request(a).get(`/things/${id}`).expect(200);
    await request(a).get('/nowhere').expect(404);
    await request(a)
      .post('/things')
      .set('content-type', 'application/json')
      .send({ big: 'x'.repeat(100) })
      .expect(413);
    await request(a).get('/things/%ff').expect(400);
    await request(a).get('/crash').expect(500);
    await request(a).purge('/things/1').expect(404);

    // Then each is one data point, the route being the pattern (never the path a client chose)
    const points = await durations();
    const find = (attributes: Record<string, unknown>) => points.find((p) => JSON.stringify(p.attributes) === JSON.stringify(attributes));
    const base = { 'udp.service': 'svc-a' };
    expect(points.map((p) => p.attributes['http.route'] ?? null)).not.toContain('/things/1');
    expect(find({ 'http.request.method': 'GET', 'http.route': '/things/:id', 'http.response.status_code': 200, ...base })?.value).toBe(3);
    expect(find({ 'http.request.method': 'GET', 'http.response.status_code': 404, ...base })?.value).toBe(1);
    expect(find({ 'http.request.method': 'POST', 'http.response.status_code': 413, ...base })?.value).toBe(1);
    expect(find({ 'http.request.method': 'GET', 'http.response.status_code': 400, ...base })?.value).toBe(1);
    expect(
      find({ 'http.request.method': 'GET', 'http.route': '/crash', 'http.response.status_code': 500, 'error.type': '500', ...base })?.value,
    ).toBe(1);
    expect(find({ 'http.request.method': '_OTHER', 'http.response.status_code': 404, ...base })?.value).toBe(1);
    expect(points.reduce((sum, p) => sum + p.value, 0)).toBe(8);
  });

  it('carries the attributes a handler added, the last value of each winning', async () => {
    await request(app()).get('/endpoints/continue_watching').expect(200);
    const point = (await durations()).find((p) => p.attributes['service.endpoint'] === 'continue_watching');
    expect(point?.attributes).toMatchObject({ 'http.route': '/endpoints/:name', 'service.component': 'second', 'udp.service': 'svc-a' });
  });
});
