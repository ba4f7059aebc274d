import { createVoiceAgent } from './agent';

export { createVoiceAgent } from './agent';

/** `npm run example:voice-agent`: AGENT_SECRET (required), PORT (4000), AGENT_DELAY_MS (2000). */
function main(): void {
  const secret = process.env.AGENT_SECRET?.trim();
  if (!secret || !/^whsec_[A-Za-z0-9+/]+={0,2}$/.test(secret)) {
    console.error(
      [
        `The voice agent could not start: AGENT_SECRET is ${secret ? 'not a whsec_… secret.' : 'not set.'}`,
        'To fix it: create a voice agent on the dashboard (/agents), copy its secret, and run',
        '  AGENT_SECRET=whsec_... npm run example:voice-agent',
      ].join('\n'),
    );
    process.exit(1);
  }
  const port = Number(process.env.PORT ?? 4000);
  const delayMs = Number(process.env.AGENT_DELAY_MS ?? 2000);
  if (!Number.isInteger(port) || port < 0 || port > 65535 || !Number.isFinite(delayMs) || delayMs < 0) {
    console.error('The voice agent could not start: PORT must be a port number and AGENT_DELAY_MS a number of milliseconds ≥ 0.');
    process.exit(1);
  }
  const server = createVoiceAgent({ secret, delayMs, log: (line) => console.log(`[voice-agent] ${line}`) });
  server.listen(port, () => console.log(`[voice-agent] listening on http://localhost:${port}/ (reports every ${delayMs} ms)`));
  const stop = () => server.close(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

if (require.main === module) main();
