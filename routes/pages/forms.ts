import type { Request, Response } from 'express';
import type { FormTokenService, AppError, Message } from '../../services/shared';
import { ValidationError, recode, parseAmount } from '../../services/shared';
import { saveSession } from '../middleware/session';

/** Picks the named text fields from a form body; never hand `req.body` itself to a template. */
export function formValues<K extends string>(req: Request, names: readonly K[]): Record<K, string> {
  const values = {} as Record<K, string>;
  for (const name of names) {
    const value = req.body?.[name];
    values[name] = typeof value === 'string' ? value : '';
  }
  return values;
}

/** What a re-rendered form shows: the user's input and a message per bad field. */
export interface FormState {
  values?: Record<string, string>;
  errors?: Record<string, string>;
}

/**
 * A service's field errors keyed by the form's input names (services name fields in camelCase).
 * `labels` replaces a field's API name at the start of its message with the form's label.
 */
export function errorsByInput(err: ValidationError, inputNames: Record<string, string> = {}, labels: Record<string, string> = {}): Record<string, string> {
  const errors: Record<string, string> = {};
  // Each message reaches the page by its code (the template's `message()` translates it).
  for (const [field, coded] of Object.entries(err.codes)) {
    const label = labels[field];
    errors[inputNames[field] ?? field] = recode(label && coded.params.label === field ? { ...coded, params: { ...coded.params, label } } : coded);
  }
  return errors;
}

/**
 * An amount as people type it (`1 250,00`, `1.250,00`, `349`) as a plain decimal for the service;
 * what is no amount goes as typed, for the service to refuse by the field; nothing typed is null.
 */
export function typedAmount(typed: string | undefined): string | null {
  const text = typed?.trim() ?? '';
  return text === '' ? null : (parseAmount(text) ?? text);
}

/** A refusal for a page, by its code (the template's `message()` translates it). */
export function pageMessage(err: AppError): Message {
  return recode(err.page);
}

/** Re-renders a form with the user's input and a message beside each bad field, or rethrows. */
export function renderFormError(res: Response, err: unknown, view: string, locals: Record<string, unknown>): void {
  if (!(err instanceof ValidationError)) throw err;
  res.status(400).render(view, { ...locals, errors: errorsByInput(err) });
}

/**
 * POST/redirect/GET with a one-time notice shown on the next page. The session is saved before
 * the redirect is sent: express-session would save at the end of the response, after the headers,
 * and a browser following the 303 could read the session before the notice is in it.
 */
export async function redirectWithNotice(req: Request, res: Response, to: string, notice: string): Promise<void> {
  if (req.session) {
    req.session.notice = notice;
    await saveSession(req.session);
  }
  res.redirect(303, to);
}

/** The field of a creation form's one-time token (see services/shared/form-tokens). */
const FORM_TOKEN_FIELD = '_once';

type Db = Parameters<Parameters<FormTokenService['once']>[3]>[0];

/**
 * Creates what a form asks for once per form token: `create` runs in the transaction that uses the
 * token. A token already used (a reload, a second tap) creates nothing: the member goes to `back`
 * with a notice saying the form was sent already, and the answer is undefined.
 */
export async function createOnce<T>(
  req: Request,
  res: Response,
  formTokens: FormTokenService,
  purpose: string,
  back: string,
  create: (db: Db) => Promise<T>,
): Promise<T | undefined> {
  const token = req.body?.[FORM_TOKEN_FIELD];
  const once = await formTokens.once(req.ctx!.user.id, purpose, typeof token === 'string' ? token : undefined, create);
  if (once.created) return once.result;
  await redirectWithNotice(req, res, back, req.t('forms.alreadySent'));
  return undefined;
}

/**
 * A path on this site to go to after signing in, or undefined: a single leading `/` and plain
 * path characters only, so no scheme, host, `//`, backslash or percent-escape can lead elsewhere.
 */
export function localPath(value: unknown): string | undefined {
  return typeof value === 'string' && /^\/(?!\/)[A-Za-z0-9/_-]{0,200}$/.test(value) ? value : undefined;
}
