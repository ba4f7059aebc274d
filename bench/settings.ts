import type { LoadOptions, Measured } from './load';
import { compare } from './load';
import { CpuMeter, MemorySampler } from './meters';
import type { Scenario } from './scenarios';
import type { ServiceProcess } from './sides';
import { procfileNodeArgs, startService } from './sides';
import type { Cleanup } from './infra';
import { stopProcess } from './infra';

interface SettingsRow {
  id: string;
  title: string;
  flagged: Measured;
  plain: Measured;
  flaggedRssMb: number;
  plainRssMb: number;
}

export interface SettingsFigures {
  flags: string;
  rows: SettingsRow[];
}

/**
 * What the Procfile's memory flags cost: the service as the Procfile runs it against the same
 * service without the flags, both started for this, side by side (alternating segments) under each
 * given scenario's load, with each process's largest RSS during it. Both use the same database,
 * Redis and secrets as the bench's main service.
 */
export async function settingsBench(options: {
  service: ServiceProcess;
  where: { databaseUrl: string; redisUrl: string; cleanup: Cleanup };
  logFile: string;
  env: NodeJS.ProcessEnv;
  scenarios: Scenario[];
  load: LoadOptions;
  log: (message: string) => void;
}): Promise<SettingsFigures | undefined> {
  const flags = procfileNodeArgs().join(' ');
  if (!flags) return undefined;
  // Two fresh processes, with and without the flags, so that only the flags differ. The bench's main
  // service has served the seeding and every scenario before this: against an identical fresh build
  // (BENCH_AGAINST) it measured 0.91-0.96 in a, which would be counted as the flags' cost.
  const secrets = options.service.secrets;
  const service = await startService({ ...options.where, logFile: options.logFile.replace(/\.log$/, '-flagged.log'), secrets }, options.env);
  const plain = await startService({ ...options.where, logFile: options.logFile, secrets, plain: true }, options.env);
  options.log(`memory settings: \`${flags}\` (${service.url}) against none (${plain.url}), both started afresh`);
  // Node's CPU alone: both sides' Postgres backends look alike.
  const noBackends = async () => [];
  const flaggedSide = { url: service.url, meter: new CpuMeter(service.child.pid!, noBackends) };
  const plainSide = { url: plain.url, meter: new CpuMeter(plain.child.pid!, noBackends) };
  const flaggedMemory = new MemorySampler(service.child.pid!);
  const plainMemory = new MemorySampler(plain.child.pid!);
  const rows: SettingsRow[] = [];
  try {
    for (const scenario of options.scenarios) {
      flaggedMemory.mark();
      plainMemory.mark();
      const result = await compare({ ...flaggedSide, target: scenario.service }, { ...plainSide, target: scenario.service }, options.load);
      rows.push({
        id: scenario.id,
        title: scenario.title,
        flagged: result.service,
        plain: result.baseline,
        flaggedRssMb: flaggedMemory.mark(),
        plainRssMb: plainMemory.mark(),
      });
      options.log(`  ${scenario.id}: ${result.service.rps.toFixed(0)} req/s with the flags, ${result.baseline.rps.toFixed(0)} without`);
    }
  } finally {
    flaggedMemory.stop();
    plainMemory.stop();
    await Promise.all([stopProcess(service.child), stopProcess(plain.child)]);
  }
  return { flags, rows };
}

/** The mean of the per-scenario throughput ratios (flags ÷ none). */
export function settingsCost(figures: SettingsFigures): number {
  return figures.rows.reduce((sum, row) => sum + row.flagged.rps / row.plain.rps, 0) / figures.rows.length;
}

export function settingsSection(figures: SettingsFigures): string[] {
  const cost = settingsCost(figures);
  return [
    '## Memory settings',
    '',
    `The Procfile runs the web process as \`node ${figures.flags} dist/server.js\`: young-generation semi-spaces of at most 8 MB (Node's default lets them grow to 16 MB each) and an old generation that grows by 100% of what survives a full collection before the next (V8's default factor is larger and grows with the allocation rate). No hard heap limit: a process that needs more memory gets it, later. The same service with and without these flags, each started for this comparison (so that only the flags differ: the bench's main service has served the seeding and every scenario before), side by side under the same load (alternating segments, ${figures.rows.length} scenarios):`,
    '',
    '| Scenario | With the flags: req/s, p50 / p99 ms, largest RSS | Without: req/s, p50 / p99 ms, largest RSS | Throughput, with ÷ without | Node CPU per request, with ÷ without |',
    '|---|---:|---:|---:|---:|',
    ...figures.rows.map((row) => {
      return `| ${row.id}. ${row.title} | ${row.flagged.rps.toFixed(0)}, ${row.flagged.p50} / ${row.flagged.p99}, ${row.flaggedRssMb.toFixed(0)} MB | ${row.plain.rps.toFixed(0)}, ${row.plain.p50} / ${row.plain.p99}, ${row.plainRssMb.toFixed(0)} MB | ${(row.flagged.rps / row.plain.rps).toFixed(2)} | ${(row.flagged.cpuMs.node / row.plain.cpuMs.node).toFixed(2)} |`;
    }),
    '',
    `Mean throughput with the flags: **${cost.toFixed(2)}×** of without (target: a cost of at most 5%, i.e. ≥ 0.95).`,
    '',
  ];
}
