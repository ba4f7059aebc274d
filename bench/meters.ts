import fs from 'node:fs';

/** Samples a process's resident memory from /proc; `peakKb` is the kernel's high-water mark. */
export class MemorySampler {
  private sinceMarkKb = 0;
  private peakKb = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly pid: number) {
    this.timer = setInterval(() => this.sample(), 250);
    this.timer.unref();
  }

  sample(): void {
    try {
      const status = fs.readFileSync(`/proc/${this.pid}/status`, 'utf8');
      const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
      this.sinceMarkKb = Math.max(this.sinceMarkKb, field('VmRSS'));
      this.peakKb = Math.max(this.peakKb, field('VmHWM'));
    } catch {
      // The process has exited; keep what was sampled.
    }
  }

  /** The RSS right now, in MB; starts a new mark. */
  now(): number {
    this.sinceMarkKb = 0;
    this.sample();
    const mb = this.sinceMarkKb / 1024;
    return mb;
  }

  /** The largest RSS sampled since the previous mark, in MB. */
  mark(): number {
    this.sample();
    const mb = this.sinceMarkKb / 1024;
    this.sinceMarkKb = 0;
    return mb;
  }

  /** Stops sampling; the peak RSS over the process's life so far, in MB. */
  stop(): number {
    this.sample();
    clearInterval(this.timer);
    return this.peakKb / 1024;
  }
}

const CLOCK_TICKS_PER_SECOND = 100; // getconf CLK_TCK on Linux

/** CPU seconds (user + system) a process has used, from /proc/<pid>/stat; 0 once it is gone. */
function cpuSeconds(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

export type CpuSnapshot = Map<number, number>;

/**
 * The CPU one side of the comparison uses: its Node process and the Postgres backends serving it
 * (found by `backends()`, e.g. from pg_stat_activity). Postgres runs on this machine, so its
 * backends' /proc entries are readable. Delta of two snapshots in CPU seconds: { node, db }.
 */
export class CpuMeter {
  constructor(
    private readonly nodePid: number,
    private readonly backends: () => Promise<number[]>,
  ) {}

  async snapshot(): Promise<CpuSnapshot> {
    const snapshot: CpuSnapshot = new Map([[this.nodePid, cpuSeconds(this.nodePid)]]);
    for (const pid of await this.backends()) snapshot.set(pid, cpuSeconds(pid));
    return snapshot;
  }

  /** CPU used between `before` and now; backends that appeared meanwhile count from zero. */
  async since(before: CpuSnapshot): Promise<{ node: number; db: number }> {
    const after = await this.snapshot();
    let db = 0;
    for (const [pid, seconds] of after) {
      if (pid !== this.nodePid) db += Math.max(0, seconds - (before.get(pid) ?? 0));
    }
    // Backends that exited meanwhile took their CPU with them; they are rare (pools keep theirs).
    return { node: after.get(this.nodePid)! - before.get(this.nodePid)!, db };
  }
}
