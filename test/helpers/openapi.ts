import Ajv2020 from 'ajv/dist/2020';
import type { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import request from 'supertest';
import { openApiDocument } from '../../openapi';

/**
 * The drift check: every response a test receives through supertest from a documented route is
 * checked against /openapi.json — its status must be documented for the operation, its media type
 * must be the documented one, and a JSON body must match the documented schema. A violation fails
 * the request's own `.expect()`/`.end()`/`await` with a message naming the route and the mismatch.
 * Routes that are not in the document are not checked (the route-listing test catches those).
 */

const DOC_ID = 'https://ocs.invalid/openapi.json';
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

interface Operation {
  method: string;
  template: string;
  regex: RegExp;
  params: number;
  responses: Record<string, { content?: Record<string, unknown> }>;
}

let state: { ajv: Ajv2020; operations: Operation[]; validators: Map<string, ValidateFunction> } | undefined;

function setup() {
  if (state) return state;
  const doc = openApiDocument() as { paths: Record<string, Record<string, { responses: Operation['responses'] }>> };
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
  addFormats(ajv);
  ajv.addSchema({ ...structuredClone(doc), $id: DOC_ID });
  const operations: Operation[] = [];
  for (const [template, item] of Object.entries(doc.paths)) {
    const pattern = template
      .split('/')
      .map((part) => (/^\{\w+\}$/.test(part) ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/');
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      // Express matches without regard to case and with or without a trailing slash.
      operations.push({ method, template, regex: new RegExp(`^${pattern}/?$`, 'i'), params: (template.match(/\{/g) ?? []).length, responses: op.responses });
    }
  }
  // A literal segment wins over a parameter (`/api/orders/export.csv` before `/api/orders/{id}`).
  operations.sort((a, b) => a.params - b.params);
  state = { ajv, operations, validators: new Map() };
  return state;
}

const pointer = (part: string) => part.replace(/~/g, '~0').replace(/\//g, '~1');

/** The documented operation a request reaches, if any. */
export function documentedOperation(method: string, pathname: string): Operation | undefined {
  const m = method.toLowerCase();
  return setup().operations.find((op) => op.method === m && op.regex.test(pathname));
}

/** What is wrong with a response of a documented route, or null when it matches the document. */
export function responseViolation(method: string, url: string, status: number, contentType: string | undefined, body: unknown): string | null {
  const { ajv, validators } = setup();
  let pathname: string;
  try {
    pathname = decodeURI(new URL(url, 'http://localhost').pathname);
  } catch {
    pathname = new URL(url, 'http://localhost').pathname;
  }
  const op = documentedOperation(method, pathname);
  if (!op) return null;
  const where = `${method.toUpperCase()} ${op.template} (${url}) answered ${status}`;
  const documented = op.responses[String(status)];
  if (!documented) return `${where}: that status is not documented (documented: ${Object.keys(op.responses).join(', ')})`;
  if (!documented.content) return null;
  const media = (contentType ?? '').split(';')[0].trim().toLowerCase();
  const mediaTypes = Object.keys(documented.content);
  if (!mediaTypes.includes(media)) return `${where} with Content-Type ${contentType ?? '(none)'}; documented: ${mediaTypes.join(', ')}`;
  if (media !== 'application/json') return null;
  const ref = `${DOC_ID}#/paths/${pointer(op.template)}/${op.method}/responses/${status}/content/application~1json/schema`;
  let validate = validators.get(ref);
  if (!validate) {
    validate = ajv.compile({ $ref: ref });
    validators.set(ref, validate);
  }
  if (validate(body)) return null;
  const problems = (validate.errors ?? []).slice(0, 8).map((e) => `${e.instancePath || '(body)'} ${e.message}`);
  return `${where}: the body does not match the document: ${problems.join('; ')}\n  body: ${JSON.stringify(body).slice(0, 600)}`;
}

/** Installs the check on supertest (once, from test/setup.ts). */
export function checkResponsesAgainstDocument(): void {
  type Res = { status: number; headers: Record<string, string>; body: unknown };
  type TestLike = { method: string; url: string };
  const proto = request.Test.prototype as unknown as {
    assert(resError: unknown, res: Res | undefined, fn?: (err: unknown, res: unknown) => void): void;
    __openapi?: boolean;
  };
  if (proto.__openapi) return;
  proto.__openapi = true;
  const assert = proto.assert;
  proto.assert = function (this: TestLike, resError, res, fn) {
    const violation = res && this.method !== 'HEAD' ? responseViolation(this.method, this.url, res.status, res.headers['content-type'], res.body) : null;
    if (!violation) return assert.call(this, resError, res, fn);
    const drift = new Error(`OpenAPI drift: ${violation}`);
    return assert.call(this, resError, res, (err: unknown, r: unknown) => {
      if (fn) fn(err ? new Error(`${drift.message}\n  and: ${(err as Error).message ?? err}`) : drift, r);
    });
  };
}
