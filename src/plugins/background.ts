import fp from 'fastify-plugin';

export interface BackgroundJobOptions {
  name: string;
  intervalMs: number;
  /** One run; errors are reported to onError and the job keeps its schedule. */
  run(): Promise<void>;
  onError(error: unknown): void;
}

/**
 * A periodic job with the app's lifecycle: started when the app is ready, stopped on close after its
 * current run has finished. Register it after the database plugin (see app.ts) so it stops before the
 * pool closes.
 */
export const backgroundJobPlugin = fp<BackgroundJobOptions>(
  async (app, options) => {
    let timer: NodeJS.Timeout | undefined;
    let running: Promise<void> | undefined;
    const tick = () => {
      if (running) return;
      running = options
        .run()
        .catch(options.onError)
        .finally(() => {
          running = undefined;
        });
    };
    app.addHook('onReady', async () => {
      timer = setInterval(tick, options.intervalMs);
      timer.unref();
    });
    app.addHook('onClose', async () => {
      clearInterval(timer);
      await running;
    });
  },
  { name: 'background-job' },
);
