// A real MariaDB server process for tests: its own data directory and socket in a temp folder, loopback TCP on a
// free port, stopped with SIGTERM (a clean InnoDB shutdown) and removed afterwards.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { stopOnExit } from '../cleanup.ts';

export interface MariaDbHandle {
  host: string;
  port: number;
  directory: string;
  /** An option file that connects as root over the socket; pass with --defaults-extra-file. */
  rootOptionsFile: string;
  /** Runs SQL as root and returns stdout (tab-separated rows, no headers). */
  sql(statements: string, database?: string): Promise<string>;
  createUser(user: string, password: string, grants: string): Promise<void>;
  stop(): Promise<void>;
}

const SERVER_CANDIDATES = ['/usr/sbin/mariadbd', '/usr/sbin/mysqld'];

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

function serverBinary(): string {
  const found = SERVER_CANDIDATES.find((path) => existsSync(path));
  if (!found) throw new Error('No MariaDB server binary found; install mariadb-server (.ci/run does).');
  return found;
}

// SQL string literal for identifiers and passwords chosen by tests.
function quote(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

export interface MariaDbOptions {
  /**
   * Run as mysql-k8s runs MySQL where it matters to a dump and its load (canonical/mysql-k8s-operator
   * lib/charms/mysql/v0/mysql.py `render_mysqld_configuration`: group replication, so the binary log is on, row-based,
   * with gtid_mode=ON and enforce_gtid_consistency=ON; log_bin_trust_function_creators and max_allowed_packet are not
   * set, so MySQL 8's defaults hold: OFF and 64 MiB). MariaDB's equivalents: --log-bin with a server id, ROW format,
   * GTIDs (MariaDB writes them whenever the binary log is on; it has no enforce_gtid_consistency, whose refusals —
   * CREATE TABLE … SELECT, temporary tables inside transactions — a mysqldump file never contains),
   * log_bin_trust_function_creators OFF (also MariaDB's default, set explicitly) and a 64 MiB max_allowed_packet
   * (MariaDB's own default is 16 MiB).
   */
  mysqlK8s?: boolean;
  /** the server's max_allowed_packet (e.g. `1M`), so a test of the packet limit stays small and fast */
  maxAllowedPacket?: string;
}

export async function startMariaDb(options: MariaDbOptions = {}): Promise<MariaDbHandle> {
  const directory = mkdtempSync(join(tmpdir(), 'mariadb-'));
  const dataDir = join(directory, 'data');
  const socket = join(directory, 'mysqld.sock');
  const port = await freePort();
  // Running as root (CI) needs --user=root; as anyone else the flag is ignored with a warning.
  const user = process.getuid?.() === 0 ? ['--user=root'] : [];
  try {
    await execa('mariadb-install-db', [
      '--no-defaults', `--datadir=${dataDir}`, '--auth-root-authentication-method=normal', '--skip-test-db', ...user,
    ]);
  } catch (error) {
    rmSync(directory, { recursive: true, force: true });
    throw error;
  }
  const child: ChildProcess = spawn(serverBinary(), [
    '--no-defaults', `--datadir=${dataDir}`, `--socket=${socket}`, `--port=${port}`, '--bind-address=127.0.0.1',
    `--pid-file=${join(directory, 'mysqld.pid')}`, '--skip-name-resolve', '--innodb-buffer-pool-size=32M',
    '--innodb-log-file-size=16M', '--character-set-server=utf8mb4', '--collation-server=utf8mb4_unicode_ci',
    `--log-error=${join(directory, 'error.log')}`, ...user,
    ...(options.mysqlK8s
      ? [`--log-bin=${join(directory, 'binlog')}`, '--server-id=1', '--binlog-format=ROW', '--log-bin-trust-function-creators=OFF', '--max-allowed-packet=64M']
      : []),
    ...(options.maxAllowedPacket ? [`--max-allowed-packet=${options.maxAllowedPacket}`] : []),
  ], { stdio: 'ignore' });
  let exited = false;
  child.once('exit', () => { exited = true; });
  const stop = stopOnExit('mariadbd', async () => {
    if (!exited) {
      const gone = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await gone;
    }
    rmSync(directory, { recursive: true, force: true });
  });

  const rootOptionsFile = join(directory, 'root.cnf');
  writeFileSync(rootOptionsFile, `[client]\nuser=root\nsocket=${socket}\n`, { mode: 0o600 });
  const sql = async (statements: string, database?: string) => {
    const result = await execa('mariadb', [
      `--defaults-extra-file=${rootOptionsFile}`, '--batch', '--skip-column-names', '--default-character-set=utf8mb4',
      ...(database ? [database] : []),
    ], { input: statements });
    return result.stdout;
  };

  const deadline = Date.now() + 30_000;
  for (;;) {
    if (exited) {
      const log = join(directory, 'error.log');
      const tail = existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').slice(-5).join('\n') : '';
      await stop();
      throw new Error(`mariadbd exited during start-up: ${tail}`);
    }
    try {
      await sql('SELECT 1');
      break;
    } catch (error) {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        await stop();
        throw new Error(`MariaDB did not accept connections within 30 s: ${(error as Error).message}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  return {
    host: '127.0.0.1',
    port,
    directory,
    rootOptionsFile,
    sql,
    async createUser(name, password, grants) {
      await sql(`CREATE USER ${quote(name)}@'%' IDENTIFIED BY ${quote(password)};\nGRANT ${grants} TO ${quote(name)}@'%';`);
    },
    stop,
  };
}
