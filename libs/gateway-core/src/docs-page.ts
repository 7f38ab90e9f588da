import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import express, { Router } from 'express';

/** `/docs`: Swagger UI served from the swagger-ui-dist package (no CDN), reading `/openapi.json`. */
export function docsPage(): Router {
  const router = Router();
  // The package folder, found without loading its 1 MB bundle into the gateway.
  const assets = dirname(require.resolve('swagger-ui-dist/package.json'));
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>User-data platform API</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css"></head>
<body><div id="ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script></body></html>`;
  const init = `window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#ui', deepLinking: true });`;
  router.get(['/docs', '/docs/'], (_req, res) => res.type('html').send(html));
  router.get('/docs/init.js', (_req, res) => res.type('application/javascript').send(init));
  router.use('/docs/assets', express.static(assets, { index: false, maxAge: '1h' }));
  // Fails at start, not at the first visit, if the package is incomplete (without reading its 1 MB bundle).
  if (!existsSync(join(assets, 'swagger-ui-bundle.js'))) throw new Error(`swagger-ui-dist has no swagger-ui-bundle.js in ${assets}`);
  return router;
}
