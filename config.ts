import crypto from 'node:crypto';
import dns from 'node:dns';
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { isSecretsKey, Secrets } from './integrations/secrets';

/** The project root, whether running from source or from `dist/`. */
export const ROOT = path.basename(__dirname) === 'dist' ? path.resolve(__dirname, '..') : __dirname;

const optionalString = z.string().trim().min(1).optional();
const secret = z.string().min(32, 'must be at least 32 characters').optional();

const commaList = (value: string) =>
  value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
/** Whatever c-ares accepts: `ip`, `ip:port`, `[ipv6]:port`. */
function validServers(value: string): boolean {
  try {
    new dns.Resolver().setServers(commaList(value));
    return commaList(value).length > 0;
  } catch {
    return false;
  }
}

const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  PUBLIC_BASE_URL: z.url().optional(),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// connection string')
    .optional(),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL')
    .optional(),
  SESSION_SECRET: secret,
  JWT_SECRET: secret,
  SECRETS_KEY: z
    .string()
    .trim()
    .refine((value) => isSecretsKey(value), 'must be 32 bytes in base64 (openssl rand -base64 32)')
    .optional(),
  SECRETS_OLD_KEYS: z
    .string()
    .refine((value) => commaList(value).every(isSecretsKey), 'must be a comma-separated list of keys, each 32 bytes in base64')
    .optional(),
  PUBLISHABLE_KEY: optionalString,
  TRUST_PROXY: z.coerce.number().int().min(0).max(10).optional(),
  BCRYPT_COST: z.coerce.number().int().min(4).max(15).default(12),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  DATA_DIR: optionalString,
  TOKEN_LIMIT_PER_IP: z.coerce.number().int().min(1).default(60),
  TOKEN_LIMIT_PER_KEY: z.coerce.number().int().min(1).default(12),
  LOGIN_LIMIT_PER_IP: z.coerce.number().int().min(1).default(30),
  LOGIN_LIMIT_PER_EMAIL: z.coerce.number().int().min(1).default(10),
  SIGNUP_LIMIT_PER_IP: z.coerce.number().int().min(1).default(20),
  HOOKS_LIMIT_PER_IP: z.coerce.number().int().min(1).default(600),
  HOOKS_BODIES_PER_IP: z.coerce.number().int().min(1).default(32),
  HOOKS_BODY_TIMEOUT_SECONDS: z.coerce.number().min(1).max(300).default(30),
  CALL_COST: z.coerce.number().min(0).max(1000).default(1),
  CALL_CLAIM_MINUTES: z.coerce.number().int().min(1).max(1440).default(15),
  CALL_RESULT_TIMEOUT_MINUTES: z.coerce.number().int().min(1).max(1440).default(30),
  ALLOW_PRIVATE_URLS: z.enum(['true', 'false'], { error: 'must be true or false' }).optional(),
  DELIVERY_TIMEOUT_SECONDS: z.coerce.number().min(1).max(120).default(10),
  DNS_SERVERS: z.string().refine(validServers, 'must be a comma-separated list of IP addresses, each with an optional :port').optional(),
  WORKER: z.enum(['on', 'off'], { error: 'must be on or off' }).default('on'),
  SHOPIFY_API_VERSION: z
    .string()
    .regex(/^\d{4}-\d{2}$/, 'must be a Shopify API version such as 2025-10')
    .default('2025-10'),
  SHOPIFY_API_ORIGIN: z.url({ protocol: /^https?$/, error: 'must be an http or https URL' }).optional(),
  SHOPIFY_CLIENT_ID: z.string().trim().min(1).max(200).optional(),
  SHOPIFY_CLIENT_SECRET: z.string().trim().min(1).max(500).optional(),
  YOUCAN_CLIENT_ID: z.string().trim().min(1).max(200).optional(),
  YOUCAN_CLIENT_SECRET: z.string().trim().min(1).max(500).optional(),
  YOUCAN_ADMIN_ORIGIN: z.url({ protocol: /^https?$/, error: 'must be an http or https URL' }).optional(),
  YOUCAN_API_ORIGIN: z.url({ protocol: /^https?$/, error: 'must be an http or https URL' }).optional(),
  SENDIT_API_ORIGIN: z.url({ protocol: /^https?$/, error: 'must be an http or https URL' }).optional(),
  OZON_API_ORIGIN: z.url({ protocol: /^https?$/, error: 'must be an http or https URL' }).optional(),
  DIGYLOG_API_ORIGIN: z.url({ protocol: /^https?$/, error: 'must be an http or https URL' }).optional(),
  YALIDINE_API_ORIGIN: z.url({ protocol: /^https?$/, error: 'must be an http or https URL' }).optional(),
  WHATSAPP_COST: z.coerce.number().min(0).max(1000).default(0),
  WHATSAPP_API_ORIGIN: z.url({ protocol: /^https?$/, error: 'must be an http or https URL' }).default('https://graph.facebook.com'),
  WHATSAPP_API_VERSION: z
    .string()
    .regex(/^v\d{1,3}\.\d$/, 'must be a Graph API version such as v24.0')
    .default('v24.0'),
  WRITE_BACK_RETRY_SECONDS: z
    .string()
    .refine((value) => commaList(value).every((s) => /^\d+(\.\d+)?$/.test(s)), 'must be a comma-separated list of seconds')
    .optional(),
});

export interface Config {
  env: 'development' | 'production' | 'test';
  isProduction: boolean;
  port: number;
  publicBaseUrl: string;
  databaseUrl: string | undefined;
  redisUrl: string | undefined;
  sessionSecret: string;
  jwtSecret: string;
  /** The key (32 bytes, base64) third-party secrets are encrypted with at rest (integrations/secrets.ts). */
  secretsKey: string;
  /** Keys values may still be sealed with during a rotation (`npm run secrets -- rotate`): read, never used to seal. */
  secretsOldKeys: readonly string[];
  publishableKey: string;
  trustProxy: number;
  bcryptCost: number;
  logLevel: string;
  dataDir: string;
  calls: {
    /** Credits charged per voice call that reached an outcome other than `failed`. */
    cost: number;
    claimMinutes: number;
    resultTimeoutMinutes: number;
    /** Whether agent and webhook URLs may point at loopback/private addresses. */
    allowPrivateUrls: boolean;
    /** How long a voice agent or a webhook endpoint has to answer (the specs say 10 s). */
    deliveryTimeoutMs: number;
    /** Nameservers that resolve agent and endpoint hosts (`ip` or `ip:port`); unset: the system's. */
    dnsServers?: readonly string[];
    /** Credits per WhatsApp message that reached an outcome other than `failed` (the shop pays Meta itself). */
    whatsappCost: number;
  };
  /** Meta's WhatsApp Cloud API: where messages are sent, and the Graph API version every request names. */
  whatsapp: {
    apiOrigin: string;
    apiVersion: string;
  };
  /** Writing a call's outcome back to Shopify and WooCommerce. */
  stores: {
    /** The Admin API version every Shopify request names (Shopify supports each for a year). */
    shopifyApiVersion: string;
    /** Where Shopify's Admin API is reached instead of `https://{shop}`: a test double, never in production. */
    shopifyApiOrigin?: string;
    /** The waits between tries of one write-back; unset: the webhooks' schedule. */
    writeBackRetrySeconds?: readonly number[];
    /** The Shopify app (Dev Dashboard) that connects shops in one click; unset: the manual way only. */
    shopifyApp?: { clientId: string; clientSecret: string };
    /** The YouCan Partners app that connects shops in one click; unset: YouCan cannot be connected. */
    youcanApp?: { clientId: string; clientSecret: string };
    /** YouCan's seller area (where the owner approves) and API; test doubles outside production. */
    youcanAdminOrigin?: string;
    youcanApiOrigin?: string;
  };
  /**
   * Carriers the service calls (docs/carriers.md): each kind's API origin when set (a test double);
   * unset, the carrier's own. Production refuses private addresses there as everywhere.
   */
  carrierOrigins: Readonly<Record<string, string>>;
  /** Development only: run the worker inside the web process. */
  inProcessWorker: boolean;
  limits: {
    tokenPerIp: number;
    tokenPerKey: number;
    loginPerIp: number;
    loginPerEmail: number;
    /** Sign-up attempts per client IP per hour. */
    signupPerIp: number;
    /** Requests to /hooks per client IP per minute: far above a voice agent's honest traffic. */
    hooksPerIp: number;
    /** Bodies one client IP may be sending to /hooks at once, before any signature holds. */
    hookBodiesPerIp: number;
    /** How long a body at /hooks may take to arrive. */
    hookBodyTimeoutMs: number;
  };
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

interface DevSecrets {
  SESSION_SECRET: string;
  JWT_SECRET: string;
  SECRETS_KEY: string;
}

/**
 * Development secrets are generated once and kept under the data directory (git-ignored). One
 * missing from an older file (SECRETS_KEY came later) is added to it; those already there stay.
 */
function devSecrets(dataDir: string): DevSecrets {
  const file = path.join(dataDir, 'secrets.json');
  let kept: Partial<DevSecrets> = {};
  try {
    kept = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<DevSecrets>;
  } catch {
    kept = {};
  }
  const secrets: DevSecrets = {
    SESSION_SECRET: kept.SESSION_SECRET ?? crypto.randomBytes(32).toString('base64url'),
    JWT_SECRET: kept.JWT_SECRET ?? crypto.randomBytes(32).toString('base64url'),
    SECRETS_KEY: kept.SECRETS_KEY && isSecretsKey(kept.SECRETS_KEY) ? kept.SECRETS_KEY : Secrets.newKey(),
  };
  if (secrets.SESSION_SECRET !== kept.SESSION_SECRET || secrets.JWT_SECRET !== kept.JWT_SECRET || secrets.SECRETS_KEY !== kept.SECRETS_KEY) {
    fs.mkdirSync(dataDir, { recursive: true });
    fs.writeFileSync(file, JSON.stringify(secrets, null, 2), { mode: 0o600 });
  }
  return secrets;
}

/**
 * The publishable key is public, so when none is configured it is derived from the JWT secret:
 * every process of one deployment agrees on it, and the HMAC reveals nothing of the secret.
 */
function derivePublishableKey(jwtSecret: string): string {
  return `pk_${crypto.createHmac('sha256', jwtSecret).update('publishable-key').digest('base64url')}`;
}

/** Reads and validates the environment once; throws a ConfigError naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Readonly<Config> {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`));
  }
  const e = parsed.data;
  const isProduction = e.NODE_ENV === 'production';
  if (isProduction) {
    const missing = (['DATABASE_URL', 'SESSION_SECRET', 'JWT_SECRET', 'SECRETS_KEY'] as const).filter((k) => !e[k]);
    if (missing.length > 0) {
      throw new ConfigError(missing.map((k) => `${k}: required when NODE_ENV=production`));
    }
    // Access tokens go where this points: only a test or a developer's double may stand in for Shopify.
    if (e.SHOPIFY_API_ORIGIN) throw new ConfigError(['SHOPIFY_API_ORIGIN: not allowed when NODE_ENV=production']);
    for (const name of ['YOUCAN_ADMIN_ORIGIN', 'YOUCAN_API_ORIGIN'] as const)
      if (e[name]) throw new ConfigError([`${name}: not allowed when NODE_ENV=production`]);
    // Access tokens go there too: never in clear text.
    if (!e.WHATSAPP_API_ORIGIN.startsWith('https://')) throw new ConfigError(['WHATSAPP_API_ORIGIN: must be https when NODE_ENV=production']);
  }
  const dataDir = path.resolve(ROOT, e.DATA_DIR ?? '.data');
  const generated = !e.SESSION_SECRET || !e.JWT_SECRET || !e.SECRETS_KEY ? devSecrets(dataDir) : undefined;
  const jwtSecret = e.JWT_SECRET ?? generated!.JWT_SECRET;
  return Object.freeze({
    env: e.NODE_ENV,
    isProduction,
    port: e.PORT,
    publicBaseUrl: (e.PUBLIC_BASE_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, ''),
    databaseUrl: e.DATABASE_URL,
    redisUrl: e.REDIS_URL,
    sessionSecret: e.SESSION_SECRET ?? generated!.SESSION_SECRET,
    jwtSecret,
    secretsKey: e.SECRETS_KEY ?? generated!.SECRETS_KEY,
    secretsOldKeys: Object.freeze(e.SECRETS_OLD_KEYS ? commaList(e.SECRETS_OLD_KEYS) : []),
    publishableKey: e.PUBLISHABLE_KEY ?? derivePublishableKey(jwtSecret),
    trustProxy: e.TRUST_PROXY ?? (isProduction ? 1 : 0),
    bcryptCost: e.BCRYPT_COST,
    logLevel: e.LOG_LEVEL,
    dataDir,
    calls: Object.freeze({
      cost: e.CALL_COST,
      claimMinutes: e.CALL_CLAIM_MINUTES,
      resultTimeoutMinutes: e.CALL_RESULT_TIMEOUT_MINUTES,
      allowPrivateUrls: e.ALLOW_PRIVATE_URLS === undefined ? !isProduction : e.ALLOW_PRIVATE_URLS === 'true',
      deliveryTimeoutMs: e.DELIVERY_TIMEOUT_SECONDS * 1000,
      dnsServers: e.DNS_SERVERS ? Object.freeze(commaList(e.DNS_SERVERS)) : undefined,
      whatsappCost: e.WHATSAPP_COST,
    }),
    whatsapp: Object.freeze({ apiOrigin: e.WHATSAPP_API_ORIGIN.replace(/\/+$/, ''), apiVersion: e.WHATSAPP_API_VERSION }),
    stores: Object.freeze({
      shopifyApiVersion: e.SHOPIFY_API_VERSION,
      shopifyApiOrigin: e.SHOPIFY_API_ORIGIN?.replace(/\/+$/, ''),
      writeBackRetrySeconds: e.WRITE_BACK_RETRY_SECONDS ? Object.freeze(commaList(e.WRITE_BACK_RETRY_SECONDS).map(Number)) : undefined,
      shopifyApp:
        e.SHOPIFY_CLIENT_ID && e.SHOPIFY_CLIENT_SECRET ? Object.freeze({ clientId: e.SHOPIFY_CLIENT_ID, clientSecret: e.SHOPIFY_CLIENT_SECRET }) : undefined,
      youcanApp:
        e.YOUCAN_CLIENT_ID && e.YOUCAN_CLIENT_SECRET ? Object.freeze({ clientId: e.YOUCAN_CLIENT_ID, clientSecret: e.YOUCAN_CLIENT_SECRET }) : undefined,
      youcanAdminOrigin: (e.YOUCAN_ADMIN_ORIGIN ?? 'https://seller-area.youcan.shop').replace(/\/+$/, ''),
      youcanApiOrigin: (e.YOUCAN_API_ORIGIN ?? 'https://api.youcan.shop').replace(/\/+$/, ''),
    }),
    carrierOrigins: Object.freeze(
      Object.fromEntries(
        (
          [
            ['sendit', e.SENDIT_API_ORIGIN],
            ['ozon_express', e.OZON_API_ORIGIN],
            ['digylog', e.DIGYLOG_API_ORIGIN],
            ['yalidine', e.YALIDINE_API_ORIGIN],
          ] as const
        ).flatMap(([kind, origin]) => (origin ? [[kind, origin.replace(/\/+$/, '')]] : [])),
      ),
    ),
    inProcessWorker: e.NODE_ENV === 'development' && e.WORKER === 'on',
    limits: Object.freeze({
      tokenPerIp: e.TOKEN_LIMIT_PER_IP,
      tokenPerKey: e.TOKEN_LIMIT_PER_KEY,
      loginPerIp: e.LOGIN_LIMIT_PER_IP,
      loginPerEmail: e.LOGIN_LIMIT_PER_EMAIL,
      signupPerIp: e.SIGNUP_LIMIT_PER_IP,
      hooksPerIp: e.HOOKS_LIMIT_PER_IP,
      hookBodiesPerIp: e.HOOKS_BODIES_PER_IP,
      hookBodyTimeoutMs: e.HOOKS_BODY_TIMEOUT_SECONDS * 1000,
    }),
  });
}

/** For process entry points: the configuration, or the list of bad variables on stderr and exit code 1. */
export function loadConfigOrExit(): Readonly<Config> {
  try {
    return loadConfig();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    console.error(err.message);
    process.exit(1);
  }
}
