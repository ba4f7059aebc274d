import { z } from 'zod';

/**
 * A small OpenAPI 3.1 builder over zod 4: each route group describes its routes with zod schemas
 * (the services' own input schemas for request bodies), and `document()` converts them with
 * `z.toJSONSchema` — named schemas become `#/components/schemas/<Name>`.
 */

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
export type Security = 'session' | 'dataApi' | 'apiKey' | 'hookSignature';

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  description: string;
  schema: z.ZodType;
  required?: boolean;
  example?: unknown;
}

interface Body {
  description?: string;
  /** JSON body by a zod schema, read as its input. */
  schema?: z.ZodType;
  /** A non-JSON body: media type and example text. */
  media?: string;
  example?: unknown;
  required?: boolean;
}

export interface Response {
  description: string;
  /** A JSON answer's shape (read as its output). Absent: no body (204) or `media`. */
  schema?: z.ZodType;
  /** A non-JSON answer (e.g. text/csv). */
  media?: string;
  example?: unknown;
  headers?: Record<string, { description: string; schema?: z.ZodType }>;
}

export interface Route {
  method: Method;
  /** OpenAPI template: `/api/orders/{id}`. */
  path: string;
  tag: string;
  summary: string;
  description?: string;
  security: Security[];
  parameters?: Parameter[];
  body?: Body;
  responses: Record<number, Response>;
}

/** JSON Schema of a zod schema; refs to named schemas point into components. */
type JsonSchema = Record<string, unknown>;

const SCHEMA_TARGET = 'draft-2020-12';

/** Named (component) schemas, by the schema object. */
const COMPONENTS = new Map<z.ZodType, string>();

/** A named response schema: `#/components/schemas/<name>` wherever it appears. */
export function named<T extends z.ZodType>(name: string, schema: T): T {
  if ([...COMPONENTS.values()].includes(name)) throw new Error(`two schemas are named ${name}`);
  COMPONENTS.set(schema, name);
  return schema;
}

export class OpenApiBuilder {
  private readonly routes: Route[] = [];
  private readonly tags = new Map<string, string>();

  tag(name: string, description: string): this {
    this.tags.set(name, description);
    return this;
  }

  add(...routes: Route[]): this {
    this.routes.push(...routes);
    return this;
  }

  document(info: { title: string; version: string; description: string }): Record<string, unknown> {
    // Each distinct schema is converted once, in a registry with the components, so that nested
    // component schemas become $refs. Route schemas get placeholder ids, inlined afterwards.
    const outputs = new Converter(COMPONENTS, 'output');
    // Request schemas (the services' own) are inlined whole; response schemas may name components.
    const inputs = new Converter(new Map(), 'input');
    const paths: Record<string, Record<string, unknown>> = {};
    const pending: Array<() => void> = [];

    for (const route of this.routes) {
      const operation: Record<string, unknown> = {
        operationId: operationId(route),
        tags: [route.tag],
        summary: route.summary,
        ...(route.description ? { description: route.description } : {}),
        security: route.security.map((name) => (name === 'dataApi' ? { apikey: [], bearerToken: [] } : { [name]: [] })),
      };
      const params = [...pathParameters(route), ...(route.parameters ?? [])];
      if (params.length > 0) {
        operation.parameters = params.map((p) => {
          const ref = inputs.use(p.schema);
          const out: Record<string, unknown> = { name: p.name, in: p.in, description: p.description, required: p.in === 'path' ? true : !!p.required };
          pending.push(() => {
            out.schema = inputs.resolve(ref);
          });
          if (p.example !== undefined) out.example = p.example;
          return out;
        });
      }
      if (route.body) {
        const b = route.body;
        const media = b.media ?? 'application/json';
        const content: Record<string, unknown> = {};
        if (b.schema) {
          const ref = inputs.use(b.schema);
          pending.push(() => {
            content.schema = inputs.resolve(ref);
          });
        } else {
          content.schema = { type: 'string' };
        }
        if (b.example !== undefined) content.example = b.example;
        operation.requestBody = { ...(b.description ? { description: b.description } : {}), required: b.required ?? true, content: { [media]: content } };
      }
      const responses: Record<string, unknown> = {};
      for (const [status, r] of Object.entries(route.responses)) {
        const out: Record<string, unknown> = { description: r.description };
        if (r.headers) {
          out.headers = Object.fromEntries(Object.entries(r.headers).map(([name, h]) => [name, { description: h.description, schema: { type: 'string' } }]));
        }
        if (r.schema || r.media) {
          const content: Record<string, unknown> = {};
          if (r.schema) {
            const ref = outputs.use(r.schema);
            pending.push(() => {
              content.schema = outputs.resolve(ref);
            });
          } else {
            content.schema = { type: 'string' };
          }
          if (r.example !== undefined) content.example = r.example;
          out.content = { [r.media ?? 'application/json']: content };
        }
        responses[status] = out;
      }
      operation.responses = responses;
      paths[route.path] ??= {};
      if (paths[route.path][route.method]) throw new Error(`${route.method.toUpperCase()} ${route.path} is described twice`);
      paths[route.path][route.method] = operation;
    }

    outputs.convert();
    inputs.convert();
    for (const fill of pending) fill();

    return {
      openapi: '3.1.0',
      info,
      servers: [{ url: '/', description: 'This server' }],
      tags: [...this.tags].map(([name, description]) => ({ name, description })),
      paths,
      components: {
        schemas: outputs.components(),
        securitySchemes: SECURITY_SCHEMES,
      },
    };
  }
}

const SECURITY_SCHEMES = {
  session: {
    type: 'apiKey',
    in: 'cookie',
    name: 'ocs.sid',
    description:
      'The dashboard session cookie (sign in at /login). State-changing requests that a browser marks as cross-site (Sec-Fetch-Site, or an Origin that is not ours) are refused with 403.',
  },
  apiKey: {
    type: 'http',
    scheme: 'bearer',
    description: 'An API key (`sk_live_` + 43 characters) as `Authorization: Bearer <key>`, only to trade it for an access token at POST /api/v1/token.',
  },
  bearerToken: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: 'The one-hour access token from POST /api/v1/token. The Data API needs it together with the `apikey` header.',
  },
  apikey: {
    type: 'apiKey',
    in: 'header',
    name: 'apikey',
    description: 'The publishable key (`publishable_key` of the token answer). The Data API needs it together with the bearer access token.',
  },
  hookSignature: {
    type: 'apiKey',
    in: 'header',
    name: 'webhook-signature',
    description:
      "Standard Webhooks signature by the voice agent's signing secret over `webhook-id`, `webhook-timestamp` (within 5 minutes) and the raw body: `webhook-signature: v1,<base64 HMAC-SHA256>`. All three headers are required.",
  },
};

function operationId(route: Route): string {
  const words = route.path
    .split('/')
    .filter(Boolean)
    .map((part) => (part.startsWith('{') ? `by-${part.slice(1, -1)}` : part))
    .join('-');
  return `${route.method}-${words}`.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''));
}

/** Path parameters named in the template, as text, unless the route describes them itself. */
function pathParameters(route: Route): Parameter[] {
  const given = new Set((route.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name));
  return [...route.path.matchAll(/\{(\w+)\}/g)]
    .map((m) => m[1])
    .filter((name) => !given.has(name))
    .map((name) => ({ name, in: 'path' as const, description: `The ${name.replace(/Id$/, '')} id (a UUID; anything else is 404)`, schema: z.string() }));
}

/** Converts many zod schemas in one registry (named ones as components, the rest inlined). */
class Converter {
  private readonly registry = z.registry<{ id: string }>();
  private readonly ids = new Map<z.ZodType, string>();
  private schemas: Record<string, JsonSchema> = {};
  private counter = 0;

  constructor(
    private readonly named: Map<z.ZodType, string>,
    private readonly io: 'input' | 'output',
  ) {
    for (const [schema, name] of named) this.registry.add(schema, { id: name });
  }

  /** A handle for the schema, resolved after `convert()`. */
  use(schema: z.ZodType): string {
    const name = this.named.get(schema);
    if (name) return name;
    let id = this.ids.get(schema);
    if (!id) {
      this.counter += 1;
      id = `__inline${this.counter}`;
      this.ids.set(schema, id);
      this.registry.add(schema, { id });
    }
    return id;
  }

  convert(): void {
    const result = z.toJSONSchema(this.registry, {
      target: SCHEMA_TARGET,
      io: this.io,
      unrepresentable: 'any',
      uri: (id) => `#/components/schemas/${id}`,
    }) as { schemas: Record<string, JsonSchema> };
    this.schemas = Object.fromEntries(Object.entries(result.schemas).map(([id, s]) => [id, clean(s)]));
  }

  resolve(id: string): JsonSchema {
    return id.startsWith('__inline') ? this.schemas[id] : { $ref: `#/components/schemas/${id}` };
  }

  /** The named schemas, converted. */
  components(): Record<string, JsonSchema> {
    return Object.fromEntries(Object.entries(this.schemas).filter(([id]) => !id.startsWith('__inline')));
  }
}

/** Drops the per-schema `$schema` and `$id` (the document declares the dialect once). */
function clean(schema: JsonSchema): JsonSchema {
  const { $schema: _s, $id: _i, ...rest } = schema;
  return rest;
}
