import { expect } from 'chai';
import { secretsKeyId } from '../../integrations/secrets';
import { signUp, TEST_ENV } from '../helpers/app';
import { TEST_SECRETS_KEY, testDatabaseUrl, testKnex } from '../helpers/db';
import { runScript } from '../helpers/process';
import { opened } from '../helpers/secrets';

/** The operator's command (issue 58, item 1): `npm run secrets -- new-key | rotate`, run as the compiled script. */
const run = (args: string[], env: Record<string, string> = {}) =>
  runScript('bin/secrets.js', args, { ...TEST_ENV, DATABASE_URL: testDatabaseUrl(), LOG_LEVEL: 'silent', ...env });
const keyIdOf = (key: string) => secretsKeyId(Buffer.from(key, 'base64'));

describe('secrets CLI (npm run secrets -- new-key | rotate)', function () {
  this.timeout(120_000);

  it('new-key prints a 32-byte key; rotate seals every secret with SECRETS_KEY reading SECRETS_OLD_KEYS, and back; a bad command is refused', async () => {
    const owner = await signUp();
    const agent = (await owner.agent.post('/api/agents').send({ name: 'Robot', kind: 'voice', endpointUrl: 'http://127.0.0.1:9/calls' }).expect(201)).body;
    const stored = () => testKnex()('agents').where({ id: agent.id }).first('secret');

    const made = await run(['new-key']);
    expect(made.code, made.stderr).to.equal(0);
    const key = made.stdout.trim();
    expect(Buffer.from(key, 'base64')).to.have.length(32);

    const forward = await run(['rotate'], { SECRETS_KEY: key, SECRETS_OLD_KEYS: TEST_SECRETS_KEY });
    expect(forward.code, forward.stderr).to.equal(0);
    expect(forward.stdout)
      .to.contain(`Sealing every secret with key ${keyIdOf(key)}`)
      .and.contain('agents:')
      .and.contain('Done');
    expect((await stored()).secret.split(':')[1]).to.equal(keyIdOf(key));

    // Back to the tests' key, so that the rest of the suite reads what it wrote.
    const back = await run(['rotate'], { SECRETS_KEY: TEST_SECRETS_KEY, SECRETS_OLD_KEYS: key });
    expect(back.code, back.stderr).to.equal(0);
    expect((await stored()).secret.split(':')[1]).to.equal(keyIdOf(TEST_SECRETS_KEY));
    expect(opened(await stored()).secret).to.equal(agent.secret);

    const wrong = await run(['spin']);
    expect(wrong.code).to.equal(1);
    expect(wrong.stderr).to.contain('Usage: npm run secrets -- rotate | new-key');
  });
});
