import crypto from 'node:crypto';
import jwt from 'jsonwebtoken';

const ACCESS_TOKEN_TTL_SECONDS = 3600;

export interface TokenResponse {
  access_token: string;
  token_type: 'bearer';
  expires_in: number;
  project_url: string;
  publishable_key: string;
}

export class InvalidTokenError extends Error {}

/** Whom a token acts for: the key's owner, in the workspace the key was made in. */
export interface TokenOwner {
  userId: string;
  workspaceId: string;
}

/** Access tokens: HS256 JWTs for the key owner in the key's workspace, verified by signature and expiry. */
export class TokenService {
  /**
   * The secret as a key object, made once: given a string, jsonwebtoken tries to read it as a PEM
   * private or public key on every sign and verify (the profile's top entries) before using it.
   */
  private readonly key: crypto.KeyObject;

  constructor(private readonly options: { secret: string; issuer: string; projectUrl: string; publishableKey: string }) {
    this.key = crypto.createSecretKey(Buffer.from(options.secret, 'utf8'));
  }

  /** A token for the key's owner, naming the workspace the key was made in: it reads that workspace only. */
  issue(owner: TokenOwner): TokenResponse {
    const accessToken = jwt.sign({ workspace_id: owner.workspaceId }, this.key, {
      algorithm: 'HS256',
      subject: owner.userId,
      issuer: this.options.issuer,
      expiresIn: ACCESS_TOKEN_TTL_SECONDS,
    });
    return {
      access_token: accessToken,
      token_type: 'bearer',
      expires_in: ACCESS_TOKEN_TTL_SECONDS,
      project_url: this.options.projectUrl,
      publishable_key: this.options.publishableKey,
    };
  }

  /**
   * The user and workspace of a valid token; throws InvalidTokenError for anything else, a token
   * made before tokens named their workspace included (they expire within the hour).
   */
  verify(token: string): TokenOwner {
    try {
      const claims = jwt.verify(token, this.key, { algorithms: ['HS256'], issuer: this.options.issuer });
      if (typeof claims === 'string' || typeof claims.sub !== 'string') throw new InvalidTokenError('no subject');
      if (typeof claims.workspace_id !== 'string') throw new InvalidTokenError('no workspace');
      return { userId: claims.sub, workspaceId: claims.workspace_id };
    } catch {
      throw new InvalidTokenError('invalid token');
    }
  }

  isPublishableKey(value: unknown): boolean {
    return typeof value === 'string' && value === this.options.publishableKey;
  }
}
