// Serves a built page (a dist/ folder) with `vite preview` on a free port of its own, for the page
// benches: the current build, or an older one beside it (`--against`).
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';

export interface Preview {
  url: string;
  stop(): void;
}

function freePort(): Promise<number> {
  return new Promise((done, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => done(port));
    });
  });
}

async function waitForHttp(url: string, timeoutMs: number, server: ChildProcess): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (server.exitCode !== null) throw new Error(`vite preview exited with code ${server.exitCode}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`vite preview did not answer at ${url} within ${timeoutMs / 1000} s`);
}

/** Serves `outDir` (default dist/) the way `npm run preview` does, until `stop()`. */
export async function servePreview(outDir = 'dist'): Promise<Preview> {
  const vite = join(process.cwd(), 'node_modules', 'vite', 'bin', 'vite.js');
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  const args = [vite, 'preview', '--outDir', resolve(outDir), '--port', String(port), '--strictPort', '--host', '127.0.0.1'];
  const server = spawn(process.execPath, args, { stdio: 'ignore' });
  const stop = () => void server.kill('SIGTERM');
  try {
    await waitForHttp(url, 30_000, server);
  } catch (e) {
    stop();
    throw e;
  }
  return { url, stop };
}
