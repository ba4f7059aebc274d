/** How many deliveries of one workspace a worker process has in flight at once (of each kind). */
export const WORKSPACE_IN_FLIGHT = 4;

/**
 * At most `limit` things in flight per workspace, in this process. A worker process runs a bounded
 * number of jobs at once (its pollers), and what matters is that one workspace whose agent or
 * endpoints never answer cannot hold all of them; with N worker processes a workspace may have
 * N × limit in flight, and the other workspaces still find free pollers in every process. (Counting
 * across processes would need a shared counter that a killed worker leaves behind.)
 */
export class WorkspaceSlots {
  private readonly held = new Map<string, number>();
  private readonly waiting = new Map<string, Array<() => void>>();

  constructor(private readonly limit = WORKSPACE_IN_FLIGHT) {}

  /** Takes a slot, waiting at most `waitMs` for one to be given back; false when none came. */
  take(workspaceId: string, waitMs = 0): Promise<boolean> {
    const held = this.held.get(workspaceId) ?? 0;
    if (held < this.limit) {
      this.held.set(workspaceId, held + 1);
      return Promise.resolve(true);
    }
    if (waitMs <= 0) return Promise.resolve(false);
    return new Promise((resolve) => {
      const queue = this.waiting.get(workspaceId) ?? [];
      this.waiting.set(workspaceId, queue);
      const handOver = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        queue.splice(queue.indexOf(handOver), 1);
        if (queue.length === 0) this.waiting.delete(workspaceId);
        resolve(false);
      }, waitMs);
      queue.push(handOver);
    });
  }

  /** Gives a slot back: to the longest waiter of the workspace if there is one. */
  give(workspaceId: string): void {
    const queue = this.waiting.get(workspaceId);
    const next = queue?.shift();
    if (next) {
      if (queue!.length === 0) this.waiting.delete(workspaceId);
      next();
      return;
    }
    const held = (this.held.get(workspaceId) ?? 0) - 1;
    if (held > 0) this.held.set(workspaceId, held);
    else this.held.delete(workspaceId);
  }
}
