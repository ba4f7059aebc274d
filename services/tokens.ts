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

/** Access tokens: HS256 JWTs for the key owner, verified by signature and expiry alone. */
export class TokenService {
  /**
   * The secret as a key object, made once: given a string, jsonwebtoken tries to read it as a PEM
   * private or public key on every sign and verify (the profile's top entries) before using it.
   */
  private readonly key: crypto.KeyObject;

  constructor(private readonly options: { secret: string; issuer: string; projectUrl: string; publishableKey: string }) {
    this.key = crypto.createSecretKey(Buffer.from(options.secret, 'utf8'));
  }

  issue(userId: string): TokenResponse {
    const accessToken = jwt.sign({}, this.key, {
      algorithm: 'HS256',
      subject: userId,
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

  /** The user id of a valid token; throws InvalidTokenError for anything else. */
  verify(token: string): string {
    try {
      const claims = jwt.verify(token, this.key, { algorithms: ['HS256'], issuer: this.options.issuer });
      if (typeof claims === 'string' || typeof claims.sub !== 'string') throw new InvalidTokenError('no subject');
      return claims.sub;
    } catch {
      throw new InvalidTokenError('invalid token');
    }
  }

  isPublishableKey(value: unknown): boolean {
    return typeof value === 'string' && value === this.options.publishableKey;
  }
}
