import crypto from 'node:crypto';

/**
 * Third-party secrets encrypted at rest (DESIGN, "Privacy"): AES-256-GCM with the key of
 * `SECRETS_KEY` (32 bytes, base64). Each value is kept as `v1:<keyId>:<iv>:<tag>:<ciphertext>`
 * (the last three base64url), the key id naming the key that sealed it, so that a later key can be
 * added and the old one kept readable until every value is sealed again. A database dump alone
 * gives no usable secret.
 *
 * Values stored before encryption (plain text) are read as they are: `open` returns a value that is
 * not sealed unchanged, and `isSealed` tells which is which.
 */
const PREFIX = 'v1';
const IV_BYTES = 12;

/** The id of a key: the first 8 characters (base64url) of its SHA-256, so that no list of ids is kept anywhere. */
export function secretsKeyId(key: Buffer): string {
  return crypto.createHash('sha256').update(key).digest('base64url').slice(0, 8);
}

/** Whether `value` is a 32-byte key in base64 (standard or url-safe, padded or not). */
export function isSecretsKey(value: string): boolean {
  return /^[A-Za-z0-9+/_-]{43}=?$/.test(value) && Buffer.from(value, 'base64').length === 32;
}

export class Secrets {
  private readonly keys = new Map<string, Buffer>();
  private readonly currentId: string;

  /** `current` seals; `older` keys (a rotation under way) are read only. Each a 32-byte key in base64. */
  constructor(current: string, older: readonly string[] = []) {
    const [first, ...rest] = [current, ...older].map((text) => {
      if (!isSecretsKey(text)) throw new Error('Secrets: a key must be 32 bytes in base64');
      return Buffer.from(text, 'base64');
    });
    this.currentId = secretsKeyId(first);
    for (const key of [first, ...rest]) this.keys.set(secretsKeyId(key), key);
  }

  /** The id of the key that seals now. */
  get keyId(): string {
    return this.currentId;
  }

  /** `plain` sealed with the current key (a new random IV each time). */
  seal(plain: string): string {
    const iv = crypto.randomBytes(IV_BYTES);
    const cipher = crypto.createCipheriv('aes-256-gcm', this.keys.get(this.currentId)!, iv);
    const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return [PREFIX, this.currentId, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ciphertext.toString('base64url')].join(':');
  }

  /**
   * A stored value in clear: decrypted by its key id when it is sealed, as it is when it is not (a
   * value stored before encryption). Throws when the key is unknown or the value was altered.
   */
  open(stored: string): string {
    if (!Secrets.isSealed(stored)) return stored;
    const [, keyId, iv, tag, ciphertext] = stored.split(':');
    const key = this.keys.get(keyId);
    if (!key) throw new Error(`Secrets: no key ${keyId} to open a value with`);
    const decipher = crypto.createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
  }

  /**
   * `record` with each of `fields` that holds text sealed: a row about to be written, or a jsonb
   * value's object (a store's write-back keys). Other fields, and fields absent or null, as they are.
   */
  sealFields<T extends object>(record: T, fields: readonly string[]): T {
    return this.mapFields(record, fields, (value) => this.seal(value));
  }

  /** `record` with each of `fields` that holds text opened (`open`): a row as read. */
  openFields<T extends object>(record: T, fields: readonly string[]): T {
    return this.mapFields(record, fields, (value) => this.open(value));
  }

  /** A stored value sealed again with the current key, or null when it already is (a rotation's step). */
  reseal(stored: string): string | null {
    if (Secrets.isSealed(stored) && stored.split(':')[1] === this.currentId) return null;
    return this.seal(this.open(stored));
  }

  private mapFields<T extends object>(record: T, fields: readonly string[], change: (value: string) => string): T {
    const copy = { ...record } as Record<string, unknown>;
    for (const field of fields) {
      const value = copy[field];
      if (typeof value === 'string') copy[field] = change(value);
    }
    return copy as T;
  }

  /** Whether a stored value is sealed (else it is plain text stored before encryption). */
  static isSealed(stored: string): boolean {
    return /^v1:[A-Za-z0-9_-]{8}:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]{22}:[A-Za-z0-9_-]*$/.test(stored);
  }

  /** A new key, as SECRETS_KEY takes it. */
  static newKey(): string {
    return crypto.randomBytes(32).toString('base64');
  }
}
