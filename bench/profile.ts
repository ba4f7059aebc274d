import fs from 'node:fs';

/**
 * Summarises a V8 .cpuprofile (from `BENCH_CPU_PROF=dir npm run bench`): self time by package
 * (or project file) and the hottest functions. Usage: node dist/bench/profile.js <file> [top]
 */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

function owner(url: string): string {
  if (!url) return '(native / V8)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  if (url.startsWith('node:')) return 'node core';
  const project = /\/dist\/(.+)$/.exec(url);
  return project ? `project: ${project[1]}` : url;
}

function main(): void {
  const [file, topArg] = process.argv.slice(2);
  if (!file) throw new Error('usage: node dist/bench/profile.js <file.cpuprofile> [top]');
  const top = Number(topArg ?? 25);
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  for (const [i, id] of profile.samples.entries()) selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  const total = [...selfUs.values()].reduce((a, b) => a + b, 0);
  const idle = [...selfUs].filter(([id]) => byId.get(id)!.callFrame.functionName === '(idle)').reduce((a, [, us]) => a + us, 0);

  const add = (map: Map<string, number>, key: string, us: number) => map.set(key, (map.get(key) ?? 0) + us);
  const packages = new Map<string, number>();
  const functions = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    if (functionName === '(idle)') continue;
    add(packages, owner(url), us);
    add(functions, `${functionName || '(anonymous)'} ${owner(url)}:${lineNumber + 1}`, us);
  }
  // Inclusive: the share of busy time with a package anywhere on the stack (a stack counts once per package).
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
  const stackPackages = new Map<number, Set<string>>();
  const packagesOn = (id: number): Set<string> => {
    let set = stackPackages.get(id);
    if (set) return set;
    const up = parent.get(id);
    set = new Set(up === undefined ? [] : packagesOn(up));
    set.add(owner(byId.get(id)!.callFrame.url));
    stackPackages.set(id, set);
    return set;
  };
  const inclusive = new Map<string, number>();
  for (const [id, us] of selfUs) {
    if (byId.get(id)!.callFrame.functionName === '(idle)') continue;
    for (const pkg of packagesOn(id)) add(inclusive, pkg, us);
  }
  const busy = total - idle;
  const print = (title: string, map: Map<string, number>) => {
    console.log(`\n${title} (share of busy time)`);
    for (const [key, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) {
      console.log(`${((100 * us) / busy).toFixed(1).padStart(5)}%  ${key}`);
    }
  };
  console.log(`${file}: ${(total / 1e6).toFixed(1)} s sampled, ${((100 * idle) / total).toFixed(0)}% idle`);
  print('Self time by package', packages);
  print('Hottest functions', functions);
  print('Inclusive time by package on the stack', inclusive);
}

main();
