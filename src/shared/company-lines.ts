/**
 * At most `share` tasks of one company run at once; the company's further tasks wait in a line of its own, in
 * arrival order, and each enters as one of the company's running tasks leaves (DECISIONS §11: a company that
 * asks for much waits for its own work, never for another company's). Used where a task holds a costly
 * resource: a render process's queue, an upload's buffers.
 */
export class CompanyLines {
  private readonly running = new Map<string, number>();
  private readonly lines = new Map<string, Array<() => void>>();

  /** `lineLength`: how many tasks of one company may wait at most (enter answers false beyond it). */
  constructor(
    private readonly share: number,
    private readonly lineLength = Number.POSITIVE_INFINITY,
  ) {}

  /**
   * Takes one of the company's places: at once while it runs fewer than its share, else after the company's
   * earlier tasks. False, with nothing taken, when the company's line is full, or when `cancel` aborts while
   * the task waits (its client went away: it leaves the line). Every true is paired with leave().
   */
  async enter(companyId: string, cancel?: AbortSignal): Promise<boolean> {
    const running = this.running.get(companyId) ?? 0;
    if (running < this.share) {
      this.running.set(companyId, running + 1);
      return true;
    }
    const line = this.lines.get(companyId) ?? [];
    if (line.length >= this.lineLength || cancel?.aborted) return false;
    this.lines.set(companyId, line);
    // leave() hands over the place of the task that ended, so the company's count stays as it was.
    return new Promise<boolean>((resolve) => {
      const onCancel = () => {
        const at = line.indexOf(enter);
        if (at < 0) return;
        line.splice(at, 1);
        if (line.length === 0 && this.lines.get(companyId) === line) this.lines.delete(companyId);
        resolve(false);
      };
      const enter = () => {
        cancel?.removeEventListener('abort', onCancel);
        resolve(true);
      };
      line.push(enter);
      cancel?.addEventListener('abort', onCancel, { once: true });
    });
  }

  /** Gives a finished task's place to the next of its company's line, or frees it. */
  leave(companyId: string): void {
    const line = this.lines.get(companyId);
    const next = line?.shift();
    if (line?.length === 0) this.lines.delete(companyId);
    if (next) {
      next();
      return;
    }
    const left = (this.running.get(companyId) ?? 1) - 1;
    if (left > 0) this.running.set(companyId, left);
    else this.running.delete(companyId);
  }
}
