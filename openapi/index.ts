import path from 'node:path';
import { Router } from 'express';
import { OpenApiBuilder } from './builder';
import * as account from './account';
import * as agents from './agents';
import * as calls from './calls';
import * as customers from './customers';
import * as data from './data';
import * as deliveries from './deliveries';
import * as files from './files';
import * as inbound from './inbound';
import * as apiKeys from './api-keys';
import * as orders from './orders';
import * as settings from './settings';
import * as shipping from './shipping';
import * as stores from './stores';
import * as team from './team';
import * as token from './token';
import * as webhooks from './webhooks';
import * as workspace from './workspace';

/** One module per route group; a new group is one file and one line here. */
const GROUPS: Array<{ register(b: OpenApiBuilder): void }> = [
  orders,
  customers,
  files,
  deliveries,
  shipping,
  calls,
  agents,
  settings,
  team,
  apiKeys,
  webhooks,
  stores,
  account,
  workspace,
  token,
  data,
  inbound,
];

let built: Record<string, unknown> | undefined;

/** The OpenAPI 3.1 document of the JSON routes, built once from the zod schemas. */
export function openApiDocument(): Record<string, unknown> {
  if (!built) {
    const b = new OpenApiBuilder();
    for (const group of GROUPS) group.register(b);
    built = b.document({
      title: 'Order Confirmation Service',
      version: '1',
      description:
        'Record cash-on-delivery orders and get each one confirmed by phone. The dashboard API (`/api`) takes the session cookie; integrators use the Data API (`/data/v1`) with an access token; voice agents report to `/hooks`. Bodies are JSON whatever the `Content-Type` (except the CSV import). Every error is `{"error", "code"?, "fields"?, "redirectTo"?}`.',
    });
  }
  return built;
}

const SWAGGER_UI = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference · Order Confirmation Service</title>
<link rel="icon" href="/assets/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/docs/swagger-ui.css">
</head>
<body>
<div id="api-reference"></div>
<noscript>
<h1>API reference · Order Confirmation Service</h1>
<p>This reference is drawn with JavaScript. Without it, read the OpenAPI 3.1 document itself:
<a href="/openapi.json">/openapi.json</a>, or the API sections of the project's README.</p>
</noscript>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`;
// No inline script: the page's init is a file of our own origin, under script-src 'self'.
const INIT_JS = `window.ui = SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#api-reference',
  deepLinking: true,
  docExpansion: 'list',
  defaultModelsExpandDepth: 0,
  tryItOutEnabled: false,
});
`;

/** GET /openapi.json, and GET /docs: the document rendered by Swagger UI, served from our origin. */
export function openApiRouter(): Router {
  const router = Router();
  router.get('/openapi.json', (_req, res) => {
    res.set('Cache-Control', 'no-cache').json(openApiDocument());
  });
  router.get('/docs', (_req, res) => {
    res.type('html').set('Cache-Control', 'no-cache').send(DOCS_HTML);
  });
  router.get('/docs/init.js', (_req, res) => {
    res.type('application/javascript').set('Cache-Control', 'no-cache').send(INIT_JS);
  });
  for (const file of ['swagger-ui-bundle.js', 'swagger-ui.css']) {
    router.get(`/docs/${file}`, (_req, res) => {
      res.sendFile(path.join(SWAGGER_UI, file), { maxAge: '1h' });
    });
  }
  return router;
}
