import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../config';
import { Secrets } from '../../integrations/secrets';

const KEY = Buffer.alloc(32, 9).toString('base64');

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('configuration', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ocs-config-'));
  });
  afterEach(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('names each bad variable', () => {
    const found = problems({
      DATA_DIR: dataDir,
      PORT: 'eighty',
      BCRYPT_COST: '99',
      DATABASE_URL: 'mysql://x',
      LOG_LEVEL: 'loud',
      PUBLIC_BASE_URL: 'not a url',
    });
    expect(found.map((p) => p.split(':')[0]).sort()).to.deep.equal(['BCRYPT_COST', 'DATABASE_URL', 'LOG_LEVEL', 'PORT', 'PUBLIC_BASE_URL']);
  });

  it('production requires DATABASE_URL, SESSION_SECRET, JWT_SECRET and SECRETS_KEY', () => {
    expect(problems({ NODE_ENV: 'production', DATA_DIR: dataDir })).to.deep.equal([
      'DATABASE_URL: required when NODE_ENV=production',
      'SESSION_SECRET: required when NODE_ENV=production',
      'JWT_SECRET: required when NODE_ENV=production',
      'SECRETS_KEY: required when NODE_ENV=production',
    ]);
    expect(
      problems({ NODE_ENV: 'production', SESSION_SECRET: 'short', JWT_SECRET: 'x'.repeat(32), SECRETS_KEY: KEY, DATABASE_URL: 'postgres://h/db' }),
    ).to.deep.equal(['SESSION_SECRET: must be at least 32 characters']);
    // Nothing is generated in production: no secrets file is written.
    expect(fs.existsSync(path.join(dataDir, 'secrets.json'))).to.equal(false);
  });

  it('SECRETS_KEY is 32 bytes in base64; anything else is refused, naming it', () => {
    for (const bad of ['short', Buffer.alloc(16).toString('base64'), Buffer.alloc(48).toString('base64'), 'x'.repeat(44)])
      expect(problems({ DATA_DIR: dataDir, SECRETS_KEY: bad }), bad).to.deep.equal(['SECRETS_KEY: must be 32 bytes in base64 (openssl rand -base64 32)']);
    expect(loadConfig({ DATA_DIR: dataDir, SECRETS_KEY: KEY }).secretsKey).to.equal(KEY);
  });

  it('SECRETS_OLD_KEYS: keys still read during a rotation, comma-separated, each 32 bytes in base64', () => {
    const old = [Buffer.alloc(32, 1).toString('base64'), Buffer.alloc(32, 2).toString('base64url')];
    expect(loadConfig({ DATA_DIR: dataDir, SECRETS_KEY: KEY }).secretsOldKeys).to.deep.equal([]);
    expect(loadConfig({ DATA_DIR: dataDir, SECRETS_KEY: KEY, SECRETS_OLD_KEYS: ` ${old[0]}, ${old[1]} ` }).secretsOldKeys).to.deep.equal(old);
    expect(problems({ DATA_DIR: dataDir, SECRETS_KEY: KEY, SECRETS_OLD_KEYS: `${old[0]},short` })).to.deep.equal([
      'SECRETS_OLD_KEYS: must be a comma-separated list of keys, each 32 bytes in base64',
    ]);
  });

  it('production trusts one proxy hop by default, configurable by TRUST_PROXY', () => {
    const base = { NODE_ENV: 'production', DATABASE_URL: 'postgres://h/db', SESSION_SECRET: 's'.repeat(32), JWT_SECRET: 'j'.repeat(32), SECRETS_KEY: KEY };
    expect(loadConfig(base).trustProxy).to.equal(1);
    expect(loadConfig({ ...base, TRUST_PROXY: '2' }).trustProxy).to.equal(2);
    expect(loadConfig({ DATA_DIR: dataDir }).trustProxy).to.equal(0);
    expect(problems({ ...base, TRUST_PROXY: 'true' })[0]).to.match(/^TRUST_PROXY:/);
  });

  it('development secrets are generated once and kept under the data directory', () => {
    const first = loadConfig({ DATA_DIR: dataDir });
    const second = loadConfig({ DATA_DIR: dataDir });
    expect(first.sessionSecret).to.have.length.greaterThan(31);
    expect(second.sessionSecret).to.equal(first.sessionSecret);
    expect(second.jwtSecret).to.equal(first.jwtSecret);
    expect(first.publishableKey).to.match(/^pk_/);
    expect(fs.statSync(path.join(dataDir, 'secrets.json')).mode & 0o777).to.equal(0o600);
    // The key third-party secrets are sealed with: 32 bytes, kept with the others.
    expect(Buffer.from(first.secretsKey, 'base64')).to.have.length(32);
    expect(second.secretsKey).to.equal(first.secretsKey);
    expect(JSON.parse(fs.readFileSync(path.join(dataDir, 'secrets.json'), 'utf8')).SECRETS_KEY).to.equal(first.secretsKey);
  });

  it('a secrets file from before SECRETS_KEY gains one; the secrets already in it stay', () => {
    const file = path.join(dataDir, 'secrets.json');
    fs.writeFileSync(file, JSON.stringify({ SESSION_SECRET: 'a'.repeat(43), JWT_SECRET: 'b'.repeat(43) }), { mode: 0o600 });
    const config = loadConfig({ DATA_DIR: dataDir });
    expect(config).to.include({ sessionSecret: 'a'.repeat(43), jwtSecret: 'b'.repeat(43) });
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).to.deep.equal({
      SESSION_SECRET: 'a'.repeat(43),
      JWT_SECRET: 'b'.repeat(43),
      SECRETS_KEY: config.secretsKey,
    });
    expect(new Secrets(config.secretsKey).open(new Secrets(config.secretsKey).seal('shpat_x'))).to.equal('shpat_x');
  });

  it('defaults: port 3000, public URL from the port, bcrypt cost 12', () => {
    const config = loadConfig({ DATA_DIR: dataDir });
    expect(config).to.include({ port: 3000, publicBaseUrl: 'http://localhost:3000', bcryptCost: 12, isProduction: false });
    expect(Object.isFrozen(config)).to.equal(true);
  });
});
