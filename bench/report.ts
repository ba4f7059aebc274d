import type { Measured } from './load';
import type { LoopReport } from './loop';
import type { CompressionFigures } from './compression';
import { importBombSection } from './import-bomb';
import { bulkInsertSection, importScalingSection } from './import-scaling';
import type { BulkInsert, ImportScaling } from './import-scaling';
import { intakeSection } from './intake';
import type { IntakeFigures } from './intake';
import type { ImportBombFigures } from './import-bomb';
import { ordersSection } from './orders';
import { deliveriesSection } from './deliveries';
import { shippingSection } from './shipping';
import type { ShippingReport } from './shipping';
import type { DeliveriesAtScale } from './deliveries';
import { webhookSection } from './webhooks';
import type { WebhookFigures } from './webhooks';
import type { OrdersAtScale } from './orders';
import { settingsCost, settingsSection } from './settings';
import type { SettingsFigures } from './settings';

export interface ScenarioResult {
  id: string;
  title: string;
  service: Measured;
  baseline: Measured;
  /** Minimum service/baseline throughput ratio the issue asks for, if any. */
  target?: number;
  /** Maximum service/baseline CPU per request the issue asks for, if any. */
  cpuTarget?: number;
  /** The largest server RSS sampled during the scenario, in MB. */
  serverRssMb?: number;
}

export interface Report {
  date: string;
  machine: string;
  versions: string;
  setup: string[];
  scenarios: ScenarioResult[];
  scale?: { result: ScenarioResult; of: ScenarioResult; explain: string; seedSeconds: number };
  memory: { serverPeakMb: number; serverBeforeLoadMb: number; baselinePeakMb: number };
  statements: Array<{ scenario: string; sql: string[] }>;
  loop?: LoopReport;
  orders?: OrdersAtScale;
  deliveries?: DeliveriesAtScale;
  shipping?: ShippingReport[];
  webhooks?: WebhookFigures;
  compression?: CompressionFigures;
  importBomb?: ImportBombFigures;
  importScaling?: ImportScaling;
  bulkInsert?: BulkInsert;
  intake?: IntakeFigures;
  settings?: SettingsFigures;
}

function compressionLine(c: CompressionFigures): string[] {
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KiB`;
  return [
    '## Compression',
    '',
    `\`/orders\` (50 orders), ${c.requests} requests each way, one at a time on loopback: **${kb(c.plain.bytes)} → ${kb(c.gzip.bytes)}** with \`Accept-Encoding: gzip\` (${((1 - c.gzip.bytes / c.plain.bytes) * 100).toFixed(0)}% fewer bytes), time to the last byte ${c.plain.meanMs.toFixed(1)} ms → ${c.gzip.meanMs.toFixed(1)} ms. The load scenarios above send no \`Accept-Encoding\`.`,
    '',
  ];
}

function loopSection(loop: LoopReport): string[] {
  return [
    '## Confirmation loop',
    '',
    "The service (production settings) and one worker process (`node dist/worker.js`, the Procfile's `worker:`), a voice agent double on loopback that accepts every call at once.",
    '',
    '| Measure | Result | Target | |',
    '|---|---:|---:|---|',
    `| dispatch throughput: ${loop.dispatched.toLocaleString('en-US')} orders due at once → \`call.requested\` received per second | ${loop.dispatchPerSecond.toFixed(0)}/s | ≥ 200/s | ${mark(loop.dispatchPerSecond >= 200)} |`,
    `| dispatch latency, new order → \`call.requested\`, idle worker (${loop.latency.samples} samples), p50 | ${loop.latency.p50Ms.toFixed(0)} ms | ≤ 500 ms | ${mark(loop.latency.p50Ms <= 500)} |`,
    `| the same, p99 | ${loop.latency.p99Ms.toFixed(0)} ms | ≤ 1,500 ms | ${mark(loop.latency.p99Ms <= 1500)} |`,
    `| result processing: signed \`call.ended\` reports answered per second (16 at a time) | ${loop.reportsPerSecond.toFixed(0)}/s | ≥ 300/s | ${mark(loop.reportsPerSecond >= 300)} |`,
    '',
  ];
}

const PEAK_RSS_TARGET_MB = 150;
/** The four hot scenarios, under whose load the memory target holds. */
const HOT_SCENARIOS = ['a', 'c', 'd', 'e'];
const STALL_FACTOR = 4;
const SCALE_TARGET = 1.3;

const BASELINE_DOES = [
  'An independent bare app (bench/baseline.ts): plain Express 5 with `pg.Pool` (max 10) and ioredis, none of the service’s code or statements, each route doing the least work it allows and answering what the service answers (before each scenario the bench compares the two answers: the same orders, field for field, in the same JSON; the token exchange’s same fields). Its statements are its own, below, each prepared once per connection. No helmet, no logging, no validation, no Knex.',
  'a, b: the session cookie’s signature checked (HMAC-SHA256, as express-session signs it), the session’s row read, the workspace its cached context names listed, newest first, as the API writes orders.',
  'c, c0: the session as in a, then in one transaction three prepared INSERTs of the order, its operation and its dispatch job (as pg-boss’s `send` writes it), with the JSON body as given (the bench sends phones already normalized, so both store the same rows). In c the database’s own triggers (status counts, risky-order flags, webhook events) run for both; in c0 the baseline writes into copies of the three tables with their columns, defaults, generated columns, checks and indexes but no trigger or foreign key (`BARE_TABLES` in bench/sql.ts).',
  "d: the two rate-limit increments the service's limiters make (EVALSHA of rate-limit-redis's script, one per IP, one per key) in one Redis round trip (a pipeline), the key read by its SHA-256, an HS256 JWT with the same claims signed with a key object made once.",
  'e: the publishable key checked, the HS256 access token verified, then one statement that lists the token’s workspace only while the token’s user is a member of it (a removed member’s token reads nothing, as the product promises on every request).',
  'The service runs its whole stack on top: security headers, a log line per request (pino), the session (its signed cookie checked, its row read; the full express-session path when its cached context is missing or due to slide), the token’s user and workspace read, CSRF checks, zod and libphonenumber validation, Knex (hot statements prepared).',
];

const num = (n: number) => (n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(1));
const ratio = (s: ScenarioResult) => s.service.rps / s.baseline.rps;
const mark = (ok: boolean) => (ok ? 'met' : '**missed**');
const cpu = (m: Measured) => `${m.cpuMs.node.toFixed(2)} + ${m.cpuMs.db.toFixed(2)}`;
const cpuTotal = (m: Measured) => m.cpuMs.node + m.cpuMs.db;
const cpuRatio = (s: ScenarioResult) => cpuTotal(s.service) / cpuTotal(s.baseline);

function row(s: ScenarioResult): string {
  const failures = s.service.failures + s.baseline.failures;
  const detail = [s.service.failureDetail && `service: ${s.service.failureDetail}`, s.baseline.failureDetail && `baseline: ${s.baseline.failureDetail}`]
    .filter(Boolean)
    .join('; ');
  return [
    '',
    `${s.id}. ${s.title}`,
    num(s.service.rps),
    `${s.service.p50} / ${s.service.p99}`,
    num(s.baseline.rps),
    `${s.baseline.p50} / ${s.baseline.p99}`,
    `**${ratio(s).toFixed(2)}**`,
    cpuRatio(s).toFixed(2),
    s.serverRssMb?.toFixed(0) ?? '',
    failures === 0 ? '0' : `**${failures}** (${detail})`,
    '',
  ]
    .join(' | ')
    .trim();
}

function costRow(s: ScenarioResult): string {
  return `| ${s.id} | ${cpu(s.service)} | ${cpu(s.baseline)} | ${cpuRatio(s).toFixed(2)} |`;
}

/** Every target of the issue next to its figure, met or missed. */
function targets(report: Report, all: ScenarioResult[]): string[] {
  const lines = ['| Target | Figure | |', '|---|---|---|'];
  for (const s of report.scenarios) {
    if (s.target !== undefined) {
      lines.push(`| ${s.id}: throughput ≥ ${s.target} × baseline | ${ratio(s).toFixed(2)} | ${mark(ratio(s) >= s.target)} |`);
    }
    if (s.cpuTarget !== undefined) {
      const cpu = cpuRatio(s);
      lines.push(`| ${s.id}: CPU per request (Node + Postgres) ≤ ${s.cpuTarget} × baseline | ${cpu.toFixed(2)} | ${mark(cpu <= s.cpuTarget)} |`);
    }
  }
  for (const s of all) {
    const ok = s.service.p99 <= STALL_FACTOR * s.service.p50;
    const withFirst = `with each connection's first answer: p99 ${s.service.p99WithFirst} ms (×${(s.service.p99WithFirst / s.service.p50).toFixed(1)}), baseline ×${(s.baseline.p99WithFirst / s.baseline.p50).toFixed(1)}`;
    lines.push(
      `| ${s.id}: p99 ≤ ${STALL_FACTOR} × p50 (service) | ${s.service.p99} ms vs ${s.service.p50} ms (×${(s.service.p99 / s.service.p50).toFixed(1)}); ${withFirst} | ${mark(ok)} |`,
    );
  }
  if (report.scale) {
    const slowdown = report.scale.of.service.rps / report.scale.result.service.rps;
    lines.push(
      `| (a) with 1M other orders within ${SCALE_TARGET}× of (a) | throughput ${(1 / slowdown).toFixed(2)} × (a), i.e. ${slowdown.toFixed(2)}× slower | ${mark(slowdown <= SCALE_TARGET)} |`,
    );
  }
  const hot = report.scenarios.filter((s) => HOT_SCENARIOS.includes(s.id) && s.serverRssMb !== undefined);
  if (hot.length > 0) {
    const peak = Math.max(...hot.map((s) => s.serverRssMb!));
    lines.push(
      `| server RSS ≤ ${PEAK_RSS_TARGET_MB} MB under the load of ${hot.map((s) => s.id).join(', ')} (largest sampled), with the Procfile's flags | ${peak.toFixed(0)} MB | ${mark(peak <= PEAK_RSS_TARGET_MB)} |`,
    );
  }
  if (report.settings) {
    const cost = settingsCost(report.settings);
    lines.push(
      `| the Procfile's memory flags cost ≤ 5% of throughput (mean of ${report.settings.rows.map((r) => r.id).join(', ')}, with ÷ without) | ${cost.toFixed(2)} | ${mark(cost >= 0.95)} |`,
    );
  }
  const failures = all.reduce((n, s) => n + s.service.failures + s.baseline.failures, 0);
  lines.push(`| no non-2xx responses or request errors | ${failures} | ${mark(failures === 0)} |`);
  return lines;
}

export function renderReport(report: Report): string {
  const all = [...report.scenarios, ...(report.scale ? [report.scale.result] : [])];
  const { memory } = report;
  return [
    '# Benchmark results',
    '',
    `Generated by \`npm run bench\` on ${report.date}.`,
    '',
    `- Machine: ${report.machine}`,
    `- ${report.versions}`,
    ...report.setup.map((s) => `- ${s}`),
    '',
    '| Scenario | Service req/s | Service p50 / p99 ms | Baseline req/s | Baseline p50 / p99 ms | Service / baseline throughput | Service / baseline CPU per request | Server RSS MB | Non-2xx |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...all.map(row),
    '',
    `Server peak RSS over the whole run: **${memory.serverPeakMb.toFixed(0)} MB** (VmHWM from /proc; ${memory.serverBeforeLoadMb.toFixed(0)} MB after start-up and seeding, before any load); the RSS column is the largest sampled (every 250 ms) during each scenario; the whole run includes b's 2,000-order answers, the loop, the webhooks and the 100,000-order work below. Baseline peak: ${memory.baselinePeakMb.toFixed(0)} MB.`,
    '',
    'CPU per request, from /proc: the Node process plus the Postgres backends serving it, in ms. Less sensitive than throughput to other work on the machine.',
    '',
    '| Scenario | Service CPU ms/req (Node + Postgres) | Baseline CPU ms/req (Node + Postgres) | Service / baseline |',
    '|---|---:|---:|---:|',
    ...all.map(costRow),
    '',
    '## Targets',
    '',
    ...targets(report, all),
    '',
    '## What the baseline does',
    '',
    ...BASELINE_DOES.map((b) => `- ${b}`),
    '',
    "The baseline's own statements (bench/sql.ts):",
    '',
    ...report.statements.flatMap((s) => [`${s.scenario}:`, '', '```sql', ...s.sql, '```', '']),
    ...(report.intake ? intakeSection(report.intake) : []),
    ...(report.settings ? settingsSection(report.settings) : []),
    ...(report.loop ? loopSection(report.loop) : []),
    ...(report.webhooks ? webhookSection(report.webhooks) : []),
    ...(report.orders ? ordersSection(report.orders) : []),
    ...(report.deliveries ? deliveriesSection(report.deliveries) : []),
    ...(report.shipping ? shippingSection(report.shipping) : []),
    ...(report.compression ? compressionLine(report.compression) : []),
    ...(report.importBomb ? importBombSection(report.importBomb) : []),
    ...(report.importScaling ? importScalingSection(report.importScaling) : []),
    ...(report.bulkInsert ? bulkInsertSection(report.bulkInsert) : []),
    ...(report.scale
      ? [
          '## Scale check',
          '',
          `Seeding 1,000 other workspaces × 1,000 orders (each with its operation) and ANALYZE took ${report.scale.seedSeconds.toFixed(1)} s. ` +
            '`EXPLAIN (ANALYZE, BUFFERS)` of the list query for the 50-order workspace afterwards:',
          '',
          '```',
          report.scale.explain,
          '```',
          '',
        ]
      : []),
  ].join('\n');
}
