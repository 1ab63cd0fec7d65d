// The exact `sh -c` text each control-plane Job container runs, and the environment it reads. POSIX sh only (dash,
// busybox, bash): no pipefail, so every pipeline stage records its own exit code. A database copy is two containers of
// one Pod sharing an emptyDir (TRANSFER_DIR): the MySQL image dumps or loads, the rclone image uploads or downloads. Credentials arrive in the environment from the
// per-run Secret; the database password is turned into a private option file, never an argument.
//
// Every script ends by writing one JSON outcome to $TERMINATION_LOG (Kubernetes' termination message, 4 KiB):
// {"ok":true,…} or {"ok":false,"error":"<one sentence>","detail":"<tail of the tool's stderr>"}.
import { REUSE_COPY_TRANSFERS } from '../volumes/job.ts';
import { STORE_CA_DIR, STORE_CA_KEY } from '../jobs/template.ts';
import { EMPTY_VOLUME_MARKER } from '../volumes/restic/job.ts';

/** Environment the scripts read. Names of rclone remotes are fixed: `store` (the backup bucket), `minio`. */
export const ENV = {
  terminationLog: 'TERMINATION_LOG',
  dbClientOptions: 'DB_CLIENT_CNF',
  dbName: 'DB_NAME',
  storePath: 'STORE_PATH',
  storeDir: 'STORE_DIR',
  expectedSha256: 'EXPECTED_SHA256',
  minioBucket: 'MINIO_BUCKET',
  /** `<bucket>/<key prefix>` of the same MinIO bucket's copy in an earlier backup, copied before the sync */
  storeCopyDest: 'STORE_COPY_DEST',
  /** the emptyDir both containers of a database copy share */
  transferDir: 'TRANSFER_DIR',
  /** the ML Metadata SQLite file, on the mlmd storage mounted into the Job */
  sqliteFile: 'SQLITE_FILE',
  /** `uid:gid` mlmd runs as, when its Pod says so (securityContext); otherwise the storage folder's owner is used */
  sqliteOwner: 'SQLITE_OWNER',
  // The restic container's (with `encryption-key`: the copies go into the control-plane restic repository). restic
  // itself reads RESTIC_REPOSITORY and RESTIC_PASSWORD, and the bucket's credentials from AWS_ACCESS_KEY_ID and
  // AWS_SECRET_ACCESS_KEY; ours are named CP_RESTIC_* so that restic never takes one for its own.
  resticRepository: 'RESTIC_REPOSITORY',
  resticPassword: 'RESTIC_PASSWORD',
  awsAccessKey: 'AWS_ACCESS_KEY_ID',
  awsSecretKey: 'AWS_SECRET_ACCESS_KEY',
  awsRegion: 'AWS_DEFAULT_REGION',
  /** `path` or `dns`: restic's s3.bucket-lookup, as the store is addressed */
  resticBucketLookup: 'CP_RESTIC_BUCKET_LOOKUP',
  resticStorageClass: 'CP_RESTIC_STORAGE_CLASS',
  /** backup: the snapshot's tags, comma-separated */
  resticTags: 'CP_RESTIC_TAGS',
  /** restore: the full id of the snapshot the authenticated manifest pins */
  resticSnapshot: 'CP_RESTIC_SNAPSHOT',
  /** a database copy's file name in its snapshot (`<database>.sql`, `mlmd.db`) */
  resticFile: 'CP_RESTIC_FILE',
  /** restore: the sha256 the manifest records of that file's bytes */
  plainSha256: 'CP_PLAIN_SHA256',
} as const;

// The tools every script relies on exist in both official images: busybox in rclone's Alpine image; coreutils, grep,
// sed and gzip in MySQL's Oracle Linux image. The MySQL image has no rclone and the rclone image no MySQL client.
const PRELUDE = String.raw`set -u
: "\${TERMINATION_LOG:=/dev/termination-log}"
json() { printf '%s' "$1" | tr '\n\t\r' '   ' | sed 's/\\/\\\\/g; s/"/\\"/g' | cut -c1-700; }
fail() {
  detail=""
  if [ -n "\${2:-}" ] && [ -s "$2" ]; then detail=$(tail -n 3 "$2"); fi
  printf '{"ok":false,"error":"%s","detail":"%s"}' "$(json "$1")" "$(json "$detail")" > "$TERMINATION_LOG"
  exit 1
}
W=$(mktemp -d) || fail "could not create a work folder"
trap 'rm -rf "$W"' EXIT
umask 077
`.replaceAll('\\${', '${');

const RCLONE = String.raw`command -v rclone >/dev/null 2>&1 || fail "the rclone image has no rclone"
RCLONE_VERSION=$(rclone version 2>/dev/null | head -n 1)
`;

const TRANSFER = String.raw`X="\${TRANSFER_DIR:-}"
[ -n "$X" ] && [ -d "$X" ] || fail "the Job has no transfer volume"
`.replaceAll('\\${', '${');

// A failing mysql client says why in its first words; turn that into the sentence the user reads.
const DB_ERROR_SENTENCE = String.raw`db_error() {
  if grep -q 'Access denied' "$2" 2>/dev/null; then fail "$1: the database refused the credentials (access denied)" "$2"
  elif grep -q -e 'max_allowed_packet' -e 'Lost connection to server during query when dumping table' "$2" 2>/dev/null; then fail "$1: a row or statement is larger than a max_allowed_packet allows (a dump loses its connection on a row over the client's limit; mysql-k8s leaves MySQL's 64 MiB server default)" "$2"
  elif grep -q -e "Can't connect" -e 'Unknown server host' -e 'Lost connection' -e 'timed out' "$2" 2>/dev/null; then fail "$1: the database server is unreachable" "$2"
  elif grep -q 'Unknown database' "$2" 2>/dev/null; then fail "$1: the database $DB_NAME does not exist" "$2"
  elif grep -q 'insufficient privileges to SHOW CREATE' "$2" 2>/dev/null; then fail "$1: the relation user may not read a stored routine another user defined (that needs SHOW_ROUTINE or global SELECT)" "$2"
  else fail "$1" "$2"; fi
}
`;

// mysqldump (MySQL 8.x, the official image) and mariadb-dump (MariaDB, the local tests) take the same core flags.
const DB_TOOLS = String.raw`DUMP=$(command -v mysqldump || command -v mariadb-dump) || fail "the MySQL image has no mysqldump or mariadb-dump"
CLIENT=$(command -v mysql || command -v mariadb) || fail "the MySQL image has no mysql or mariadb client"
printf '%s\n' "$DB_CLIENT_CNF" > "$W/client.cnf"
`;

/**
 * Backup, first container (MySQL image, an init container): dumps one database as a consistent snapshot
 * (--single-transaction: InnoDB MVCC, no table locks), gzipped into the transfer volume beside its sha256 and the
 * dump tool's version. It never touches the backup bucket.
 */
export const MYSQL_DUMP_SCRIPT = PRELUDE + TRANSFER + DB_ERROR_SENTENCE + DB_TOOLS + String.raw`
# Flags only MySQL 8's mysqldump knows, found in its own --help (mariadb-dump has neither):
# GTID_PURGED in a dump is refused by a restore into a running server; column statistics (ANALYZE ... HISTOGRAM)
# need information_schema.COLUMN_STATISTICS, which a MariaDB or MySQL 5.7 server lacks.
HELP=$("$DUMP" --help 2>/dev/null)
ONLY_MYSQL=""
case "$HELP" in *--set-gtid-purged*) ONLY_MYSQL="--set-gtid-purged=OFF" ;; esac
case "$HELP" in *--column-statistics*) ONLY_MYSQL="$ONLY_MYSQL --column-statistics=0" ;; esac
# --max-allowed-packet: the largest row the dump may read (mysqldump's default is 24 MiB, the mysql client's 16 MiB;
# 1 GiB is both tools' ceiling, so what the server stores the dump reads and the load can send).
{ "$DUMP" --defaults-extra-file="$W/client.cnf" --single-transaction --quick --routines --triggers --hex-blob \
    --max-allowed-packet=1G --no-tablespaces --default-character-set=utf8mb4 $ONLY_MYSQL "$DB_NAME" 2> "$W/dump.err"; echo $? > "$W/dump.rc"; } \
  | gzip -c > "$X/dump.sql.gz"
GZIP_RC=$?
if [ "$(cat "$W/dump.rc")" != 0 ]; then rm -f "$X/dump.sql.gz"; db_error "the dump of database $DB_NAME failed" "$W/dump.err"; fi
if [ "$GZIP_RC" != 0 ]; then rm -f "$X/dump.sql.gz"; fail "compressing the dump failed (is the Job's transfer volume full?)"; fi
sha256sum < "$X/dump.sql.gz" | cut -d ' ' -f 1 > "$X/dump.sql.gz.sha256"
# How many tables the database holds, read in the dump's own container: a database with none is not KFP's or Katib's
# (mysql-k8s creates an empty one for any name it is asked), and the engine must not call it covered.
"$CLIENT" --defaults-extra-file="$W/client.cnf" --batch --skip-column-names "$DB_NAME" > "$X/dump.tables" 2> "$W/client.err" \
  -e "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE()" || db_error "counting the tables of database $DB_NAME failed" "$W/client.err"
"$DUMP" --version 2>/dev/null | head -n 1 > "$X/dump.tool"
`;

/** Backup, second container (rclone image): uploads the dump the first one left, unchanged, and reports the outcome. */
export const MYSQL_UPLOAD_SCRIPT = PRELUDE + RCLONE + TRANSFER + String.raw`
[ -s "$X/dump.sql.gz.sha256" ] && [ -f "$X/dump.sql.gz" ] || fail "the dump container left no dump"
SHA=$(cat "$X/dump.sql.gz.sha256")
[ "$(sha256sum < "$X/dump.sql.gz" | cut -d ' ' -f 1)" = "$SHA" ] || fail "the dump changed between the dump and the upload"
if ! rclone copyto "$X/dump.sql.gz" "store:$STORE_PATH" 2> "$W/rclone.err"; then
  # A partial dump must not look like a backup.
  rclone deletefile "store:$STORE_PATH" >/dev/null 2>&1
  fail "the upload of the dump to the backup bucket failed" "$W/rclone.err"
fi
BYTES=$(wc -c < "$X/dump.sql.gz" | tr -d ' ')
TOOL=$(cat "$X/dump.tool" 2>/dev/null)
TABLES=$(tr -cd '0-9' < "$X/dump.tables" 2>/dev/null)
[ -n "$TABLES" ] || TABLES=0
printf '{"ok":true,"database":"%s","path":"%s","bytes":%s,"sha256":"%s","tables":%s,"tool":"%s","rclone":"%s"}' \
  "$(json "$DB_NAME")" "$(json "$STORE_PATH")" "$BYTES" "$SHA" "$TABLES" "$(json "$TOOL")" "$(json "$RCLONE_VERSION")" > "$TERMINATION_LOG"
`;

/** Restore, first container (rclone image, an init container): downloads the dump into the transfer volume. */
export const MYSQL_DOWNLOAD_SCRIPT = PRELUDE + RCLONE + TRANSFER + String.raw`
rclone copyto "store:$STORE_PATH" "$X/dump.sql.gz" 2> "$W/rclone.err" || fail "the dump could not be downloaded from the backup bucket" "$W/rclone.err"
printf '%s\n' "$RCLONE_VERSION" > "$X/rclone.version"
`;

/**
 * Restore, second container (MySQL image): refuses the dump unless its sha256 matches the manifest, empties the
 * database (tables and views made after the backup must not survive) and loads the dump.
 */
export const MYSQL_LOAD_SCRIPT = PRELUDE + TRANSFER + DB_ERROR_SENTENCE + DB_TOOLS + String.raw`
[ -f "$X/dump.sql.gz" ] || fail "the download container left no dump"
if [ -n "\${EXPECTED_SHA256:-}" ]; then
  ACTUAL=$(sha256sum < "$X/dump.sql.gz" | cut -d ' ' -f 1)
  [ "$ACTUAL" = "$EXPECTED_SHA256" ] || fail "the dump's sha256 does not match the manifest; the backup is corrupt"
fi
gzip -t "$X/dump.sql.gz" 2> "$W/gzip.err" || fail "the dump is not a valid gzip file" "$W/gzip.err"
# The server refuses a statement over its max_allowed_packet (MySQL "Replication and max_allowed_packet", "Packet Too
# Large"; mysql-k8s leaves MySQL's 64 MiB), and --hex-blob writes a BLOB of n bytes as 2n+2 characters, each row too big
# for mysqldump's net_buffer_length in an INSERT on a line of its own: a row over about half the limit dumps but does
# not load. So the longest line (bytes, counted as one printable character each) is measured before anything is
# emptied. Both tools' --max-allowed-packet=1G covers the client side; only the server's own global limit binds.
size() { if [ "$1" -ge 10485760 ]; then echo "$(( $1 / 1048576 )) MiB"; else echo "$(( $1 / 1024 )) KiB"; fi; }
LONGEST=$(gunzip -c "$X/dump.sql.gz" | LC_ALL=C tr -c '\n' x | LC_ALL=C wc -L | tr -cd '0-9')
"$CLIENT" --defaults-extra-file="$W/client.cnf" --batch --skip-column-names -e 'SELECT @@GLOBAL.max_allowed_packet' "$DB_NAME" > "$W/packet" 2> "$W/client.err" \
  || db_error "reading max_allowed_packet of the server of database $DB_NAME failed" "$W/client.err"
PACKET=$(tr -cd '0-9' < "$W/packet")
if [ -n "$LONGEST" ] && [ -n "$PACKET" ] && [ "$LONGEST" -ge "$PACKET" ]; then
  fail "the dump holds a statement of $(size "$LONGEST"), over this server's max_allowed_packet of $(size "$PACKET") (mysqldump --hex-blob doubles a BLOB, so a row over about half the limit cannot be loaded); as the database's admin run SET GLOBAL max_allowed_packet = $(( (LONGEST / 1048576 + 2) * 1048576 )) on its primary for the restore, then rerun (nothing was changed)"
fi
"$CLIENT" --defaults-extra-file="$W/client.cnf" --batch --skip-column-names "$DB_NAME" > "$W/drop.sql" 2> "$W/client.err" <<'SQL' || db_error "reading the tables of database $DB_NAME failed" "$W/client.err"
SELECT CONCAT('DROP ', IF(table_type = 'VIEW', 'VIEW', 'TABLE'), ' IF EXISTS ', CHAR(96),
              REPLACE(table_name, CHAR(96), CONCAT(CHAR(96), CHAR(96))), CHAR(96), ';')
FROM information_schema.tables WHERE table_schema = DATABASE() ORDER BY table_type = 'VIEW' DESC;
SQL
# With the binary log on (mysql-k8s: always, for group replication) and log_bin_trust_function_creators OFF (its
# default), only a SUPER user may create stored functions and triggers (ERROR 1419; MySQL's "Stored Program Binary
# Logging"). The relation user has no SUPER, so when the dump holds either, try a harmless function first and stop
# before the database is emptied rather than half-way through the load. Procedures are not subject to this.
if gunzip -c "$X/dump.sql.gz" | grep -q -E '^/\*!50003 CREATE\*/.* TRIGGER |^CREATE .*FUNCTION '; then
  "$CLIENT" --defaults-extra-file="$W/client.cnf" "$DB_NAME" > /dev/null 2> "$W/client.err" <<'SQL' || {
CREATE FUNCTION kubeflow_upgrader_probe() RETURNS INT DETERMINISTIC NO SQL RETURN 1;
DROP FUNCTION kubeflow_upgrader_probe;
SQL
    grep -q -e '1419' -e '1418' "$W/client.err" && fail "the dump holds triggers or stored functions, which this server (binary log on, log_bin_trust_function_creators OFF) lets only a SUPER user create; as the database's admin run SET GLOBAL log_bin_trust_function_creators = ON on its primary for the restore, then rerun (nothing was changed)" "$W/client.err"
    db_error "checking that database $DB_NAME accepts stored functions failed" "$W/client.err"
  }
fi
{ echo 'SET FOREIGN_KEY_CHECKS=0;'; cat "$W/drop.sql"; } \
  | "$CLIENT" --defaults-extra-file="$W/client.cnf" "$DB_NAME" 2> "$W/client.err" || db_error "emptying database $DB_NAME failed" "$W/client.err"
# The relation user of the target database is rarely the one that created the views, triggers and routines:
# definers become the restoring user, on the dump's own header lines only (row data is one INSERT per line).
gunzip -c "$X/dump.sql.gz" \
  | sed -e '/^\/\*!50/s/DEFINER=[^ *]*@[^ *]*/DEFINER=CURRENT_USER/g' -e '/^CREATE /s/DEFINER=[^ *]*@[^ *]*/DEFINER=CURRENT_USER/g' \
  | "$CLIENT" --defaults-extra-file="$W/client.cnf" --default-character-set=utf8mb4 --max-allowed-packet=1G "$DB_NAME" 2> "$W/client.err" || db_error "loading the dump into database $DB_NAME failed" "$W/client.err"
BYTES=$(wc -c < "$X/dump.sql.gz" | tr -d ' ')
TOOL=$("$CLIENT" --version 2>/dev/null | head -n 1)
RCLONE_VERSION=$(cat "$X/rclone.version" 2>/dev/null)
printf '{"ok":true,"database":"%s","path":"%s","bytes":%s,"tool":"%s","rclone":"%s"}' \
  "$(json "$DB_NAME")" "$(json "$STORE_PATH")" "$BYTES" "$(json "$TOOL")" "$(json "$RCLONE_VERSION")" > "$TERMINATION_LOG"
`.replaceAll('\\${', '${');

// Object count, bytes and a digest of the sha256 listing (sorted) of the copy's bytes, downloaded again and hashed here:
// never rclone's MD5 of an S3 object, which for a multipart upload is X-Amz-Meta-Md5chksum, user metadata that
// whoever writes the bucket sets (rclone/rclone backend/s3/s3.go Object.Hash: the ETag when it is an MD5, else that
// metadata). The listing is stored beside the copy (STORE_DIR.sha256sums, outside the folder a restore syncs), and the
// backup's index of data files records each object's sha256 from it (src/catalog/data-files.ts).
const STORE_DIR_SUMMARY = String.raw`rclone size --json "store:$STORE_DIR" > "$W/size.json" 2> "$W/rclone.err" || fail "the copy in the backup bucket could not be measured" "$W/rclone.err"
OBJECTS=$(sed -n 's/.*"count":\([0-9]*\).*/\1/p' "$W/size.json")
BYTES=$(sed -n 's/.*"bytes":\([0-9]*\).*/\1/p' "$W/size.json")
rclone hashsum sha256 --download "store:$STORE_DIR" > "$W/sums" 2> "$W/rclone.err" || fail "the copy in the backup bucket could not be read back" "$W/rclone.err"
LC_ALL=C sort -k 2 "$W/sums" > "$W/listing" || fail "the copy's listing could not be sorted"
LISTING=$(sha256sum < "$W/listing" | cut -d ' ' -f 1)
rclone copyto "$W/listing" "store:$STORE_DIR.sha256sums" 2> "$W/rclone.err" || fail "the copy's listing could not be stored in the backup bucket" "$W/rclone.err"
`;

/**
 * Mirrors one MinIO bucket into `store:$STORE_DIR`. With STORE_COPY_DEST (the bucket's copy in an earlier backup), that
 * copy is first copied inside the backup bucket (server-side, on --transfers), then MinIO is synced onto it: objects
 * equal in size and MD5 (--checksum, both sides' listings: never by modification time) stay as copied, changed and new
 * ones are read from MinIO and uploaded, and gone ones are deleted. Not --copy-dest: rclone looks an object up there
 * only from its march's SrcOnly callback, one object after another within a directory (rclone/rclone
 * fs/march/march.go processJob, fs/sync/sync.go SrcOnly), three requests in a row each (src/volumes/job.ts).
 */
export const MINIO_BACKUP_SCRIPT = PRELUDE + RCLONE + String.raw`
VERB=copy
if [ -n "${'${STORE_COPY_DEST:-}'}" ]; then
  # The copy only saves uploads: if it fails (that backup pruned meanwhile), the sync uploads whatever is missing.
  rclone copy --checksum --transfers ${REUSE_COPY_TRANSFERS} "store:$STORE_COPY_DEST" "store:$STORE_DIR" 2> "$W/rclone.err" || true
  VERB=sync
fi
rclone "$VERB" --checksum "minio:$MINIO_BUCKET" "store:$STORE_DIR" 2> "$W/rclone.err" || {
  grep -q -e 'directory not found' -e 'NoSuchBucket' "$W/rclone.err" && fail "the MinIO bucket $MINIO_BUCKET does not exist" "$W/rclone.err"
  fail "copying MinIO bucket $MINIO_BUCKET to the backup bucket failed" "$W/rclone.err"
}
` + STORE_DIR_SUMMARY + String.raw`printf '{"ok":true,"bucket":"%s","path":"%s","objects":%s,"bytes":%s,"listingSha256":"%s","tool":"%s"}' \
  "$(json "$MINIO_BUCKET")" "$(json "$STORE_DIR")" "\${OBJECTS:-0}" "\${BYTES:-0}" "$LISTING" "$(json "$RCLONE_VERSION")" > "$TERMINATION_LOG"
`.replaceAll('\\${', '${');

/** The second half of a MinIO restore: the copy in "$D" measured, checked against the manifest, then synced into MinIO. */
const MINIO_LOAD = String.raw`rclone size --json "$D" > "$W/size.json" 2> "$W/rclone.err" || fail "the downloaded copy could not be measured" "$W/rclone.err"
OBJECTS=$(sed -n 's/.*"count":\([0-9]*\).*/\1/p' "$W/size.json")
BYTES=$(sed -n 's/.*"bytes":\([0-9]*\).*/\1/p' "$W/size.json")
if [ -n "\${EXPECTED_SHA256:-}" ]; then
  rclone hashsum sha256 "$D" > "$W/sums" 2> "$W/rclone.err" || fail "the downloaded copy could not be hashed" "$W/rclone.err"
  LC_ALL=C sort -k 2 "$W/sums" > "$W/listing" || fail "the downloaded copy's listing could not be sorted"
  if [ "$(sha256sum < "$W/listing" | cut -d ' ' -f 1)" != "$EXPECTED_SHA256" ]; then
    rclone md5sum "$D" > "$W/md5s" 2> "$W/rclone.err" || fail "the downloaded copy could not be hashed" "$W/rclone.err"
    LC_ALL=C sort -k 2 "$W/md5s" > "$W/listing.md5" || fail "the downloaded copy's listing could not be sorted"
    [ "$(sha256sum < "$W/listing.md5" | cut -d ' ' -f 1)" = "$EXPECTED_SHA256" ] \
      || fail "the copy of MinIO bucket $MINIO_BUCKET in the backup bucket does not match the sha256s in the manifest; the backup is corrupt, and MinIO was not changed"
  fi
fi
rclone mkdir "minio:$MINIO_BUCKET" 2> "$W/rclone.err" || fail "MinIO bucket $MINIO_BUCKET could not be created" "$W/rclone.err"
rclone sync "$D" "minio:$MINIO_BUCKET" 2> "$W/rclone.err" || fail "copying the backup into MinIO bucket $MINIO_BUCKET failed" "$W/rclone.err"
rclone check "$D" "minio:$MINIO_BUCKET" 2> "$W/rclone.err" || fail "MinIO bucket $MINIO_BUCKET differs from the backup after the copy" "$W/rclone.err"
printf '{"ok":true,"bucket":"%s","path":"%s","objects":%s,"bytes":%s,"tool":"%s"}' \
  "$(json "$MINIO_BUCKET")" "$(json "$STORE_DIR")" "\${OBJECTS:-0}" "\${BYTES:-0}" "$(json "$RCLONE_VERSION")" > "$TERMINATION_LOG"
`.replaceAll('\\${', '${');

/**
 * Makes one MinIO bucket exactly the backup's copy (sync: objects made after the backup are removed). The copy is
 * downloaded into the Job first and checked by the sha256s of the bytes it downloaded against the manifest's listing
 * digest; only then is MinIO written, from those same bytes. Backups made before the listing held sha256s recorded
 * MD5s instead: those are computed from the downloaded bytes too, never taken from the bucket's metadata.
 */
export const MINIO_RESTORE_SCRIPT = PRELUDE + RCLONE + String.raw`
D="$W/copy"
mkdir -p "$D" || fail "could not create a folder for the download"
rclone copy "store:$STORE_DIR" "$D" 2> "$W/rclone.err" || fail "the copy of MinIO bucket $MINIO_BUCKET could not be downloaded from the backup bucket" "$W/rclone.err"
` + MINIO_LOAD;

/**
 * MinIO restore from the control-plane restic repository, last container (rclone image): the restic container restored
 * the pinned snapshot into the transfer volume; its sha256 listing is checked against the manifest as a download's is,
 * and only then is MinIO made exactly that copy.
 */
export const MINIO_RESTORE_STAGED_SCRIPT = PRELUDE + RCLONE + TRANSFER + String.raw`
D="$X/bucket"
[ -d "$D" ] || fail "the restic container left no copy of the bucket"
` + MINIO_LOAD;

// ML Metadata (canonical/mlmd-operator: `file:/data/mlmd.db` on the storage `mlmd-data`) is one SQLite file. A copy of
// the file while mlmd writes could be torn; SQLite's online backup API copies a consistent snapshot page by page
// (sqlite.org "Using the SQLite Online Backup API"). Python's sqlite3 module exposes it as Connection.backup, and the
// official python image has Python, sh, gzip and coreutils; it has no rclone, which its partner container brings.
const SQLITE_PYTHON = String.raw`PY=$(command -v python3) || fail "the SQLite image has no python3"
`;

/**
 * MLMD backup, first container (python image, an init container): an online backup of $SQLITE_FILE, checked with
 * PRAGMA integrity_check, gzipped into the transfer volume under the names the upload container reads.
 */
export const SQLITE_BACKUP_SCRIPT = PRELUDE + TRANSFER + SQLITE_PYTHON + String.raw`
# mlmd creates its database when it first starts (READWRITE_OPENCREATE): storage without the file yet holds no metadata.
# It is copied as an empty database, which the engine reports as not covered rather than failing the whole backup.
SOURCE="$SQLITE_FILE"
[ -f "$SOURCE" ] || { SOURCE="$W/absent.db"; : > "$SOURCE"; }
# The live database is opened read-only (URI mode=ro, which Python's sqlite3 takes with uri=True): a read-write
# connection would roll back a hot journal that a crashed mlmd left, writing into mlmd's file as this Job's user. The
# reads still take SQLite's shared locks, so the online backup is consistent (never immutable=1, which skips them).
# A hot journal then stops the backup with a sentence: mlmd recovers it when it next opens the database.
if [ -f "$SOURCE-journal" ] && [ -s "$SOURCE-journal" ]; then HOT=1; else HOT=0; fi
"$PY" - "$SOURCE" "$W/mlmd.db" > "$X/dump.tables" 2> "$W/py.err" <<'PYTHON' || { [ "$HOT" = 1 ] && fail "$SQLITE_FILE has an unfinished transaction (a journal left by a crash), which a read-only copy cannot roll back; start mlmd so it recovers it, then back up again" "$W/py.err"; fail "the online backup of $SQLITE_FILE failed" "$W/py.err"; }
import sqlite3, sys, urllib.parse
source = sqlite3.connect("file:" + urllib.parse.quote(sys.argv[1]) + "?mode=ro", uri=True)
copy = sqlite3.connect(sys.argv[2])
source.backup(copy)
source.close()
verdict = copy.execute("PRAGMA integrity_check").fetchone()[0]
tables = copy.execute("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'").fetchone()[0]
copy.close()
if verdict != "ok":
    sys.exit("the copy failed its integrity check: " + verdict)
print(tables)
PYTHON
gzip -c "$W/mlmd.db" > "$X/dump.sql.gz" || fail "compressing the copy failed (is the Job's transfer volume full?)"
sha256sum < "$X/dump.sql.gz" | cut -d ' ' -f 1 > "$X/dump.sql.gz.sha256"
"$PY" -c 'import sqlite3, sys; print("python " + sys.version.split()[0] + ", sqlite " + sqlite3.sqlite_version)' > "$X/dump.tool" 2>/dev/null
`;

/**
 * MLMD restore, second container (python image): checks the download against the manifest, unpacks it beside the
 * live file, checks its integrity, gives it the owner and mode mlmd runs with, then swaps it in with one rename
 * (removing the old journal files, which belong to the replaced database). The owner is the live file's; without
 * one, the uid:gid mlmd's Pod runs as ($SQLITE_OWNER), else the storage folder's owner, which canonical/mlmd-operator
 * sets to its workload user (src/components/chown_component.py): never this Job's root with its umask 077.
 */
export const SQLITE_RESTORE_SCRIPT = PRELUDE + TRANSFER + SQLITE_PYTHON + String.raw`
[ -f "$X/dump.sql.gz" ] || fail "the download container left no copy"
if [ -n "\${EXPECTED_SHA256:-}" ]; then
  ACTUAL=$(sha256sum < "$X/dump.sql.gz" | cut -d ' ' -f 1)
  [ "$ACTUAL" = "$EXPECTED_SHA256" ] || fail "the copy's sha256 does not match the manifest; the backup is corrupt"
fi
DIR=$(dirname "$SQLITE_FILE")
[ -d "$DIR" ] || fail "the mlmd storage is not mounted at $DIR"
# not "$$": Kubernetes turns "$$" in a container's command into "$" (kubernetes third_party/forked/golang/expansion)
NEXT="$DIR/.mlmd-restore.partial"
gunzip -c "$X/dump.sql.gz" > "$NEXT" 2> "$W/gzip.err" || { rm -f "$NEXT"; fail "the copy could not be unpacked onto the mlmd storage" "$W/gzip.err"; }
"$PY" - "$NEXT" 2> "$W/py.err" <<'PYTHON' || { rm -f "$NEXT"; fail "the copy failed its integrity check; nothing was replaced" "$W/py.err"; }
import sqlite3, sys
verdict = sqlite3.connect(sys.argv[1]).execute("PRAGMA integrity_check").fetchone()[0]
if verdict != "ok":
    sys.exit(verdict)
PYTHON
if [ -f "$SQLITE_FILE" ]; then
  OWNER=$(stat -c %u:%g "$SQLITE_FILE") && MODE=$(stat -c %a "$SQLITE_FILE") || { rm -f "$NEXT"; fail "could not read the owner of $SQLITE_FILE"; }
else
  # SQLite creates a database file 0644 (SQLITE_DEFAULT_FILE_PERMISSIONS) less the umask; mlmd runs with 022.
  OWNER="\${SQLITE_OWNER:-}"
  [ -n "$OWNER" ] || OWNER=$(stat -c %u:%g "$DIR") || { rm -f "$NEXT"; fail "could not read the owner of $DIR"; }
  MODE=644
fi
chown "$OWNER" "$NEXT" 2> "$W/chown.err" && chmod "$MODE" "$NEXT" 2>> "$W/chown.err" || { rm -f "$NEXT"; fail "the restored copy could not be given mlmd's owner $OWNER and mode $MODE; nothing was replaced" "$W/chown.err"; }
rm -f "$SQLITE_FILE-journal" "$SQLITE_FILE-wal" "$SQLITE_FILE-shm"
mv -f "$NEXT" "$SQLITE_FILE" || { rm -f "$NEXT"; fail "the restored copy could not replace $SQLITE_FILE"; }
BYTES=$(wc -c < "$X/dump.sql.gz" | tr -d ' ')
TOOL=$("$PY" -c 'import sqlite3, sys; print("python " + sys.version.split()[0] + ", sqlite " + sqlite3.sqlite_version)' 2>/dev/null)
RCLONE_VERSION=$(cat "$X/rclone.version" 2>/dev/null)
printf '{"ok":true,"database":"%s","path":"%s","bytes":%s,"tool":"%s","rclone":"%s"}' \
  "$(json "$DB_NAME")" "$(json "$STORE_PATH")" "$BYTES" "$(json "$TOOL")" "$(json "$RCLONE_VERSION")" > "$TERMINATION_LOG"
`.replaceAll('\\${', '${');

// With `encryption-key` the copies go into the control-plane restic repository (src/controlplane/restic-password.ts)
// instead of plain files: one container of the official restic image (Alpine: restic and busybox) beside the dump,
// SQLite or rclone container, sharing the transfer volume with it. Init containers run one after another, so a copy is
// handed over as a file there, never through a pipe between two containers. What restic 0.14 does that this relies on:
// - `backup --stdin --stdin-filename <name>` stores what it reads as one file `/<name>` of the snapshot, and `dump
//   <snapshot> /<name>` writes it back (cmd/restic/cmd_backup.go, cmd_dump.go); a relative target `.` is stored at the
//   snapshot's root (the volume mover's case, src/volumes/restic/job.ts).
// - Every blob is encrypted and authenticated (AES-256-CTR, Poly1305) under the repository's master key, which only the
//   password opens; every read checks the MAC, so a pinned snapshot id restores only what the key holder stored.
// - `backup --json` ends with one summary line naming the snapshot by its short id (internal/ui/backup/json.go); the
//   engine turns it into the full id from the bucket's listing (src/volumes/restic/snapshot-id.ts).
// - A missing repository fails a backup with "Is there a repository at the following location?" before anything is
//   read: the container runs `init`, then the backup again (the copies of one backup run one after another, so no two
//   inits race); an exclusive lock (a prune's, or verify's check) left by a dead process is removed by `unlock`, which
//   removes stale locks only, and a live one fails the copy with its sentence.
// - restic 0.14 refuses an empty snapshot ("snapshot is empty"): an empty MinIO bucket is saved as one empty marker file
//   (the volume mover's, EMPTY_VOLUME_MARKER), which the restore leaves out.
const RESTIC = String.raw`command -v restic >/dev/null 2>&1 || fail "the restic image has no restic"
RESTIC_VERSION=$(restic version 2>/dev/null | head -n 1)
OPTS="--no-cache -o s3.bucket-lookup=\${CP_RESTIC_BUCKET_LOOKUP:-path}"
if [ -n "\${CP_RESTIC_STORAGE_CLASS:-}" ]; then OPTS="$OPTS -o s3.storage-class=$CP_RESTIC_STORAGE_CLASS"; fi
if [ -f "${STORE_CA_DIR}/${STORE_CA_KEY}" ]; then OPTS="$OPTS --cacert ${STORE_CA_DIR}/${STORE_CA_KEY}"; fi
restic_fail() {
  if grep -q "wrong password or no key found" "$2" 2>/dev/null; then fail "$1: the control-plane restic repository does not open with the password of this encryption-key (its data was written under another key)" "$2"
  elif grep -q -e "ciphertext verification failed" -e "hash does not match" -e "is damaged" "$2" 2>/dev/null; then fail "$1: restic found data in the control-plane repository that fails its authentication, so it was changed or damaged in the bucket; nothing was changed" "$2"
  elif grep -q "is already locked" "$2" 2>/dev/null; then fail "$1: the control-plane restic repository is locked by a prune or a verify running now; run it again once that has ended" "$2"
  elif grep -q -e "Is there a repository at the following location" -e "unable to open config file" "$2" 2>/dev/null; then fail "$1: there is no control-plane restic repository in the backup bucket (its config is gone)" "$2"
  else fail "$1" "$2"; fi
}
# runs restic with the arguments given; once more after removing a stale exclusive lock (a prune or check killed)
locked_retry() {
  restic $OPTS "$@" 2> "$W/restic.err" && return 0
  grep -q "is already locked exclusively" "$W/restic.err" || return 1
  restic $OPTS unlock > /dev/null 2>> "$W/unlock.err" || return 1
  restic $OPTS "$@" 2> "$W/restic.err"
}
`.replaceAll('\\${', '${');

/** The snapshot's short id from restic's JSON summary, or the container fails. */
const RESTIC_SUMMARY = String.raw`SNAPSHOT=$(grep '"message_type":"summary"' "$W/restic.out" | tail -n 1 | sed -n 's/.*"snapshot_id":"\([0-9a-f]*\)".*/\1/p')
[ -n "$SNAPSHOT" ] || fail "restic reported no snapshot for the copy" "$W/restic.err"
`;

// `backup` below is the one command; a repository that is not there yet is created once, then the backup runs again.
const RESTIC_BACKUP_WITH_INIT = String.raw`if ! backup; then
  if grep -q "Is there a repository at the following location" "$W/restic.err"; then
    restic $OPTS init > /dev/null 2> "$W/init.err" || grep -q -e "config already initialized" -e "config file already exists" "$W/init.err" \
      || restic_fail "the control-plane restic repository could not be created" "$W/init.err"
  elif grep -q "is already locked exclusively" "$W/restic.err"; then
    restic $OPTS unlock > /dev/null 2>> "$W/unlock.err" || true
  else
    restic_fail "storing the copy in the control-plane restic repository failed" "$W/restic.err"
  fi
  backup || restic_fail "storing the copy in the control-plane restic repository failed" "$W/restic.err"
fi
`;

/**
 * Backup of a database (MySQL dump or ML Metadata's SQLite copy), last container (restic image): the dump or SQLite
 * container left its copy gzipped in the transfer volume (the plain files' layout, so those containers are the same);
 * it goes into the repository uncompressed (restic compresses and deduplicates: a gzip stream would defeat both) as the
 * one file CP_RESTIC_FILE of a snapshot. The sha256 recorded is that of the uncompressed bytes, which the restore checks
 * again. A database without tables is not stored (the engine reports it not covered), nor is an empty one ever sent to
 * restic, which refuses an empty snapshot.
 */
export const RESTIC_FILE_BACKUP_SCRIPT = PRELUDE + RESTIC + TRANSFER + String.raw`
[ -s "$X/dump.sql.gz.sha256" ] && [ -f "$X/dump.sql.gz" ] || fail "the dump container left no dump"
[ "$(sha256sum < "$X/dump.sql.gz" | cut -d ' ' -f 1)" = "$(cat "$X/dump.sql.gz.sha256")" ] || fail "the dump changed between the dump and its backup"
gzip -t "$X/dump.sql.gz" 2> "$W/gzip.err" || fail "the dump is not a valid gzip file" "$W/gzip.err"
TOOL=$(cat "$X/dump.tool" 2>/dev/null)
TABLES=$(tr -cd '0-9' < "$X/dump.tables" 2>/dev/null)
[ -n "$TABLES" ] || TABLES=0
PLAIN_SHA=$(gunzip -c "$X/dump.sql.gz" | sha256sum | cut -d ' ' -f 1)
BYTES=$(gunzip -c "$X/dump.sql.gz" | wc -c | tr -d ' ')
SNAPSHOT=""
if [ "$TABLES" != 0 ] && [ "$BYTES" != 0 ]; then
  backup() { gunzip -c "$X/dump.sql.gz" | restic $OPTS backup --json --host kubeflow-upgrader --tag "$CP_RESTIC_TAGS" --stdin --stdin-filename "$CP_RESTIC_FILE" > "$W/restic.out" 2> "$W/restic.err"; }
` + RESTIC_BACKUP_WITH_INIT + RESTIC_SUMMARY + String.raw`fi
printf '{"ok":true,"database":"%s","path":"%s","bytes":%s,"sha256":"%s","tables":%s,"tool":"%s","rclone":"%s","restic":"%s"}' \
  "$(json "$DB_NAME")" "$(json "$CP_RESTIC_FILE")" "$BYTES" "$PLAIN_SHA" "$TABLES" "$(json "$TOOL")" "$(json "$RESTIC_VERSION")" "$SNAPSHOT" > "$TERMINATION_LOG"
`;

/**
 * Restore of a database, first container (restic image, an init container): the pinned snapshot's one file is dumped
 * (restic checks every blob's MAC as it reads), gzipped into the transfer volume under the name the load (or SQLite
 * restore) container reads, and its uncompressed bytes checked against the manifest's sha256 before that container
 * runs: nothing is changed unless they match.
 */
export const RESTIC_FILE_RESTORE_SCRIPT = PRELUDE + RESTIC + TRANSFER + String.raw`
fetch() {
  { restic $OPTS dump "$CP_RESTIC_SNAPSHOT" "/$CP_RESTIC_FILE" 2> "$W/restic.err"; echo $? > "$W/restic.rc"; } | gzip -c > "$X/dump.sql.gz"
  [ "$(cat "$W/restic.rc")" = 0 ]
}
if ! fetch; then
  grep -q "is already locked exclusively" "$W/restic.err" || { rm -f "$X/dump.sql.gz"; restic_fail "the copy could not be read from the control-plane restic repository" "$W/restic.err"; }
  restic $OPTS unlock > /dev/null 2>> "$W/unlock.err" || true
  fetch || { rm -f "$X/dump.sql.gz"; restic_fail "the copy could not be read from the control-plane restic repository" "$W/restic.err"; }
fi
if [ -n "\${CP_PLAIN_SHA256:-}" ]; then
  ACTUAL=$(gunzip -c "$X/dump.sql.gz" | sha256sum | cut -d ' ' -f 1)
  [ "$ACTUAL" = "$CP_PLAIN_SHA256" ] || { rm -f "$X/dump.sql.gz"; fail "the copy read from the control-plane restic repository does not match its sha256 in the manifest; the backup is corrupt, and nothing was changed"; }
fi
# the load container reports the mover's version as it does rclone's
printf '%s\n' "$RESTIC_VERSION" > "$X/rclone.version"
`.replaceAll('\\${', '${');

/**
 * MinIO backup, first container (rclone image, an init container): the bucket copied into the transfer volume (the
 * Job's emptyDir must hold the bucket once), measured, and its sha256 listing made from the copied bytes (the plain
 * mirror's format: `<sha256>  <path>`, sorted by path), whose digest the manifest records.
 */
export const MINIO_STAGE_SCRIPT = PRELUDE + RCLONE + TRANSFER + String.raw`
D="$X/bucket"
mkdir -p "$D" || fail "could not create a folder for the copy in the transfer volume"
rclone copy "minio:$MINIO_BUCKET" "$D" 2> "$W/rclone.err" || {
  grep -q -e 'directory not found' -e 'NoSuchBucket' "$W/rclone.err" && fail "the MinIO bucket $MINIO_BUCKET does not exist" "$W/rclone.err"
  fail "copying MinIO bucket $MINIO_BUCKET into the Job's transfer volume failed (is it large enough?)" "$W/rclone.err"
}
rclone size --json "$D" > "$W/size.json" 2> "$W/rclone.err" || fail "the copy could not be measured" "$W/rclone.err"
sed -n 's/.*"count":\([0-9]*\).*/\1/p' "$W/size.json" > "$X/bucket.objects"
sed -n 's/.*"bytes":\([0-9]*\).*/\1/p' "$W/size.json" > "$X/bucket.bytes"
rclone hashsum sha256 "$D" > "$W/sums" 2> "$W/rclone.err" || fail "the copy could not be hashed" "$W/rclone.err"
LC_ALL=C sort -k 2 "$W/sums" > "$W/listing" || fail "the copy's listing could not be sorted"
sha256sum < "$W/listing" | cut -d ' ' -f 1 > "$X/bucket.listing"
printf '%s\n' "$RCLONE_VERSION" > "$X/rclone.version"
`;

/** MinIO backup, last container (restic image): the staged copy becomes one snapshot whose root is the bucket's. */
export const RESTIC_DIR_BACKUP_SCRIPT = PRELUDE + RESTIC + TRANSFER + String.raw`
D="$X/bucket"
[ -d "$D" ] && [ -s "$X/bucket.listing" ] || fail "the rclone container left no copy of the bucket"
cd "$D" || fail "the copy of the bucket cannot be entered"
what=.
if [ -z "$(ls -A)" ]; then
  mkdir -p "$W/empty" && : > "$W/empty/${EMPTY_VOLUME_MARKER}" && cd "$W/empty" || fail "could not make the marker of an empty bucket"
  what=${EMPTY_VOLUME_MARKER}
fi
backup() { restic $OPTS backup --json --host kubeflow-upgrader --tag "$CP_RESTIC_TAGS" "$what" > "$W/restic.out" 2> "$W/restic.err"; }
` + RESTIC_BACKUP_WITH_INIT + RESTIC_SUMMARY + String.raw`OBJECTS=$(tr -cd '0-9' < "$X/bucket.objects")
BYTES=$(tr -cd '0-9' < "$X/bucket.bytes")
printf '{"ok":true,"bucket":"%s","path":"%s","objects":%s,"bytes":%s,"listingSha256":"%s","tool":"%s","restic":"%s"}' \
  "$(json "$MINIO_BUCKET")" "$(json "$RESTIC_REPOSITORY")" "\${OBJECTS:-0}" "\${BYTES:-0}" "$(cat "$X/bucket.listing")" "$(json "$(cat "$X/rclone.version" 2>/dev/null)")" "$SNAPSHOT" > "$TERMINATION_LOG"
`.replaceAll('\\${', '${');

/** MinIO restore, first container (restic image, an init container): the pinned snapshot restored into the transfer volume. */
export const RESTIC_DIR_RESTORE_SCRIPT = PRELUDE + RESTIC + TRANSFER + String.raw`
D="$X/bucket"
mkdir -p "$D" || fail "could not create a folder for the copy in the transfer volume"
locked_retry restore "$CP_RESTIC_SNAPSHOT" --exclude "/${EMPTY_VOLUME_MARKER}" --target "$D" > /dev/null \
  || restic_fail "the copy of MinIO bucket $MINIO_BUCKET could not be read from the control-plane restic repository" "$W/restic.err"
`;
