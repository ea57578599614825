import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of the shared PostgreSQL server, so a test can take "the database" away from
 * one app without touching the real server (which every test file shares).
 *
 * - `up`: connections are piped to the target.
 * - `down` (a crash): every proxied connection is destroyed and new ones are reset at once.
 * - `blackhole` (a network partition): connections are accepted and stay open, but no byte passes
 *   in either direction, so the client sees silence rather than an error.
 */
export type ProxyMode = 'up' | 'down' | 'blackhole';

export class TcpProxy {
  private readonly sockets = new Set<Socket>();
  private mode: ProxyMode = 'up';
  /** Connections accepted so far (each a pool client of the app). */
  connections = 0;
  /** When set, a connection is cut the moment the client sends a chunk this matches (before it is forwarded). */
  cutWhen: ((chunk: Buffer) => boolean) | undefined;

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    let proxy: TcpProxy | undefined;
    const server = createServer((client) => proxy?.accept(client, target));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    proxy = new TcpProxy(server, (server.address() as { port: number }).port);
    return proxy;
  }

  /** The same database URL, reached through the proxy. */
  urlFor(databaseUrl: string): string {
    const url = new URL(databaseUrl);
    url.hostname = '127.0.0.1';
    url.port = String(this.port);
    return url.toString();
  }

  get currentMode(): ProxyMode {
    return this.mode;
  }

  get openConnections(): number {
    return this.sockets.size;
  }

  private track(socket: Socket) {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  }

  private accept(client: Socket, target: { host: string; port: number }) {
    this.connections += 1;
    this.track(client);
    if (this.mode === 'down') {
      client.resetAndDestroy();
      return;
    }
    if (this.mode === 'blackhole') {
      // Read and drop whatever the client sends; never answer.
      client.on('data', () => undefined);
      return;
    }
    const upstream = connect(target.port, target.host);
    this.track(upstream);
    client.on('data', (chunk: Buffer) => {
      if (this.cutWhen?.(chunk)) {
        client.resetAndDestroy();
        upstream.destroy();
      }
    });
    client.pipe(upstream);
    upstream.pipe(client);
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
  }

  /** The database "crashes": open connections are cut, new ones are refused until `up()`. */
  down(): void {
    this.mode = 'down';
    for (const socket of this.sockets) socket.resetAndDestroy();
  }

  /**
   * The network goes silent: open connections stop passing bytes (they are not closed), new ones are
   * accepted and never answered.
   */
  blackhole(): void {
    this.mode = 'blackhole';
    for (const socket of this.sockets) {
      socket.unpipe();
      socket.pause();
      socket.removeAllListeners('data');
      socket.on('data', () => undefined);
      socket.resume();
    }
  }

  /** The database is back: new connections reach it again. Sockets cut or silenced earlier stay dead. */
  up(): void {
    if (this.mode === 'blackhole') {
      for (const socket of this.sockets) socket.destroy();
    }
    this.mode = 'up';
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
