import type { Coded, Message } from './messages';
import { decode, english, msg, recode } from './messages';

/** The code a message carries; a text without one is a mistake in the code base, refused at once. */
function codeOf(message: Message): Coded {
  const coded = decode(message);
  if (!coded) throw new TypeError(`A message without a code (see services/shared/messages): ${message}`);
  return coded;
}

/**
 * Services throw these; one translator per chain (JSON, HTML) turns them into responses. The
 * message carries its code (`msg()`): the API gets its English text, a page its code (`page`).
 */
/**
 * Runs `work` with errors made inside it capturing no stack: for code that makes an error per bad
 * row of a file (a refusal is an answer to bad input, not a fault, and 20,000 stacks are megabytes).
 */
export function withoutStacks<T>(work: () => T): T {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return work();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

export class AppError extends Error {
  /** The message by its code, as pages show it in their language. */
  readonly page: Coded;

  constructor(
    readonly status: number,
    message: Message,
    readonly code?: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    const coded = codeOf(message);
    // An answer to bad input, not a fault: no stack to capture (an import of 20,000 bad rows makes
    // one per row, and their stacks alone pushed it past its memory bound). As withoutStacks does,
    // around a call that cannot be wrapped in a function.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(english(coded));
    Error.stackTraceLimit = limit;
    this.page = coded;
    this.name = new.target.name;
  }
}

/** A field's message by field name, each with its code (`msg()`). */
export type FieldErrors = Record<string, Message>;

/**
 * Bad input, by field. A field's message may carry its code (`msg()` of services/shared/messages): the API
 * gets its English text in `fields`, the pages its code in `codes`.
 */
export class ValidationError extends AppError {
  readonly fields: Record<string, string>;
  /** Each field's message by its code. */
  readonly codes: Record<string, Coded>;

  constructor(fields: FieldErrors, message: Message = msg('validationFailed')) {
    const codes = Object.fromEntries(Object.entries(fields).map(([name, text]) => [name, codeOf(text)]));
    const texts = Object.fromEntries(Object.entries(codes).map(([name, coded]) => [name, english(coded)]));
    super(400, message, 'VALIDATION_ERROR', { fields: texts });
    this.fields = texts;
    this.codes = codes;
  }

  /** The fields' messages with their codes, to gather into another ValidationError. */
  messages(): FieldErrors {
    return Object.fromEntries(Object.entries(this.codes).map(([name, coded]) => [name, recode(coded)]));
  }
}

export class NotFoundError extends AppError {
  constructor(message: Message = msg('notFound')) {
    super(404, message);
  }
}

export class ConflictError extends AppError {
  constructor(message: Message, code?: string) {
    super(409, message, code);
  }
}

export class ForbiddenError extends AppError {
  constructor(message: Message = msg('forbidden')) {
    super(403, message);
  }
}

/** What existed and is no more (a used, revoked or expired invitation link). */
export class GoneError extends AppError {
  constructor(message: Message) {
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
