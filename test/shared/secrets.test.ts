import { expect } from 'chai';
import { isSecretsKey, Secrets, secretsKeyId } from '../../integrations/secrets';

/** Third-party secrets at rest: AES-256-GCM, a key id with each value, plain values of before read as they are. */
describe('secrets sealed with SECRETS_KEY', () => {
  const key = Secrets.newKey();

  it('a sealed value opens to what was sealed; the same value twice seals differently; it names its key', () => {
    const secrets = new Secrets(key);
    const a = secrets.seal('shprt_refresh_token');
    const b = secrets.seal('shprt_refresh_token');
    expect(a).not.to.equal(b);
    expect(a).not.to.contain('shprt_refresh_token');
    expect(a.split(':').slice(0, 2)).to.deep.equal(['v1', secretsKeyId(Buffer.from(key, 'base64'))]);
    expect(Secrets.isSealed(a)).to.equal(true);
    expect(secrets.open(a)).to.equal('shprt_refresh_token');
    expect(secrets.open(secrets.seal(''))).to.equal('');
    expect(secrets.open(secrets.seal('مفتاح ✓'))).to.equal('مفتاح ✓');
  });

  it('a value stored before encryption is read as it is', () => {
    expect(Secrets.isSealed('shpat_legacy_token')).to.equal(false);
    expect(new Secrets(key).open('shpat_legacy_token')).to.equal('shpat_legacy_token');
  });

  it('an altered value, or one of an unknown key, is refused; an older key still opens its values', () => {
    const old = new Secrets(key);
    const sealed = old.seal('shpat_token');
    const parts = sealed.split(':');
    const flipped = Buffer.from(parts[4], 'base64url');
    flipped[0] ^= 1;
    expect(() => old.open([...parts.slice(0, 4), flipped.toString('base64url')].join(':'))).to.throw();
    const next = Secrets.newKey();
    expect(() => new Secrets(next).open(sealed)).to.throw('no key');
    const rotating = new Secrets(next, [key]);
    expect(rotating.open(sealed)).to.equal('shpat_token');
    expect(rotating.seal('x').split(':')[1]).to.equal(rotating.keyId).and.not.to.equal(old.keyId);
  });

  it('a key is 32 bytes in base64', () => {
    expect(isSecretsKey(key)).to.equal(true);
    expect(isSecretsKey(Buffer.alloc(32).toString('base64url'))).to.equal(true);
    expect(isSecretsKey(Buffer.alloc(31).toString('base64'))).to.equal(false);
    expect(() => new Secrets('not a key')).to.throw('32 bytes');
  });
});
