import type { Coded } from './messages';
import { decode, plain } from './messages';

/** Services throw these; one translator per chain (JSON, HTML) turns them into responses. */
export class AppError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export type FieldErrors = Record<string, string>;

/**
 * Bad input, by field. A field's message may carry its code (`msg()` of services/messages): the API
 * gets its English text in `fields`, the pages its code in `codes`.
 */
export class ValidationError extends AppError {
  readonly fields: FieldErrors;
  /** Each field's message by its code (a field whose message has no code yet is absent). */
  readonly codes: Record<string, Coded>;

  constructor(fields: FieldErrors, message = 'Validation failed') {
    const english = Object.fromEntries(Object.entries(fields).map(([name, text]) => [name, plain(text)]));
    super(400, message, 'VALIDATION_ERROR', { fields: english });
    this.fields = english;
    this.codes = Object.fromEntries(
      Object.entries(fields).flatMap(([name, text]) => {
        const coded = decode(text);
        return coded ? [[name, coded]] : [];
      }),
    );
  }
}

export class NotFoundError extends AppError {
  constructor(message = 'Not found') {
    super(404, message);
  }
}

export class ConflictError extends AppError {
  constructor(message: string, code?: string) {
    super(409, message, code);
  }
}

export class ForbiddenError extends AppError {
  constructor(message = 'Forbidden') {
    super(403, message);
  }
}

/** What existed and is no more (a used, revoked or expired invitation link). */
export class GoneError extends AppError {
  constructor(message: string) {
    super(410, message);
  }
}

/** The caller's workspace and their role in it: what a service needs to apply who may do what. */
export interface WorkspaceActor {
  id: string;
  role: 'owner' | 'member';
}

/**
 * What the owner alone may do: the integrations that send customer data out of the workspace or
 * hold a secret (voice agents, webhook endpoints). Anyone else gets 403 `Forbidden`, whatever the
 * path (JSON route, page or a future caller), because the service asks, not the route.
 */
export function ownerOnly(workspace: WorkspaceActor): void {
  if (!isOwner(workspace)) throw new ForbiddenError();
}

/** Whether the caller may manage the integrations (pages show members no buttons for them). */
export function isOwner(workspace: WorkspaceActor): boolean {
  return workspace.role === 'owner';
}
