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

export class ValidationError extends AppError {
  constructor(readonly fields: FieldErrors, message = 'Validation failed') {
    super(400, message, 'VALIDATION_ERROR', { fields });
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
  constructor(message: string) {
    super(403, message);
  }
}

/** What existed and is no more (a used, revoked or expired invitation link). */
export class GoneError extends AppError {
  constructor(message: string) {
    super(410, message);
  }
}
