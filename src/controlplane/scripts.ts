// The exact `sh -c` text each control-plane Job runs, and the environment it reads. POSIX sh only (dash, busybox):
// no pipefail, so every pipeline stage records its own exit code. Credentials arrive in the environment from the
// per-run Secret; the database password is turned into a private option file, never an argument.
//
// Every script ends by writing one JSON outcome to $TERMINATION_LOG (Kubernetes' termination message, 4 KiB):
// {"ok":true,…} or {"ok":false,"error":"<one sentence>","detail":"<tail of the tool's stderr>"}.

/** Environment the scripts read. Names of rclone remotes are fixed: `store` (the backup bucket), `minio`. */
export const ENV = {
  terminationLog: 'TERMINATION_LOG',
  dbClientOptions: 'DB_CLIENT_CNF',
  dbName: 'DB_NAME',
  storePath: 'STORE_PATH',
  storeDir: 'STORE_DIR',
  expectedSha256: 'EXPECTED_SHA256',
  minioBucket: 'MINIO_BUCKET',
} as const;

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
command -v rclone >/dev/null 2>&1 || fail "the Job image has no rclone"
RCLONE_VERSION=$(rclone version 2>/dev/null | head -n 1)
`.replaceAll('\\${', '${');

// A failing mysql client says why in its first words; turn that into the sentence the user reads.
const DB_ERROR_SENTENCE = String.raw`db_error() {
  if grep -q 'Access denied' "$2" 2>/dev/null; then fail "$1: the database refused the credentials (access denied)" "$2"
  elif grep -q -e "Can't connect" -e 'Unknown server host' -e 'Lost connection' -e 'timed out' "$2" 2>/dev/null; then fail "$1: the database server is unreachable" "$2"
  elif grep -q 'Unknown database' "$2" 2>/dev/null; then fail "$1: the database $DB_NAME does not exist" "$2"
  else fail "$1" "$2"; fi
}
`;

const DB_TOOLS = String.raw`DUMP=$(command -v mariadb-dump || command -v mysqldump) || fail "the Job image has no mariadb-dump or mysqldump"
CLIENT=$(command -v mariadb || command -v mysql) || fail "the Job image has no mariadb or mysql client"
printf '%s\n' "$DB_CLIENT_CNF" > "$W/client.cnf"
`;

/**
 * Dumps one database as a consistent snapshot (--single-transaction: InnoDB MVCC, no table locks), gzips it and
 * streams it to `store:$STORE_PATH`; size and sha256 are taken from the same stream with two FIFOs.
 */
export const MYSQL_BACKUP_SCRIPT = PRELUDE + DB_ERROR_SENTENCE + DB_TOOLS + String.raw`
# MySQL 8's mysqldump writes GTID_PURGED unless told not to, which a restore into a running server refuses.
GTID=""
if "$DUMP" --help 2>/dev/null | grep -q -- '--set-gtid-purged'; then GTID="--set-gtid-purged=OFF"; fi
mkfifo "$W/hash" "$W/count"
sha256sum < "$W/hash" > "$W/sha256" & HASHER=$!
wc -c < "$W/count" > "$W/bytes" & COUNTER=$!
{ "$DUMP" --defaults-extra-file="$W/client.cnf" --single-transaction --quick --routines --triggers --hex-blob \
    --no-tablespaces --default-character-set=utf8mb4 $GTID "$DB_NAME" 2> "$W/dump.err"; echo $? > "$W/dump.rc"; } \
  | { gzip -c; echo $? > "$W/gzip.rc"; } \
  | tee "$W/hash" "$W/count" \
  | rclone rcat "store:$STORE_PATH" 2> "$W/rclone.err"
UPLOAD_RC=$?
wait $HASHER; wait $COUNTER
if [ "$(cat "$W/dump.rc")" != 0 ] || [ "$(cat "$W/gzip.rc")" != 0 ] || [ "$UPLOAD_RC" != 0 ]; then
  # A partial dump must not look like a backup.
  rclone deletefile "store:$STORE_PATH" >/dev/null 2>&1
  [ "$(cat "$W/dump.rc")" != 0 ] && db_error "the dump of database $DB_NAME failed" "$W/dump.err"
  [ "$UPLOAD_RC" != 0 ] && fail "the upload of the dump to the backup bucket failed" "$W/rclone.err"
  fail "compressing the dump failed"
fi
BYTES=$(tr -d ' \n' < "$W/bytes")
SHA=$(cut -d ' ' -f 1 < "$W/sha256")
TOOL=$("$DUMP" --version 2>/dev/null | head -n 1)
printf '{"ok":true,"database":"%s","path":"%s","bytes":%s,"sha256":"%s","tool":"%s","rclone":"%s"}' \
  "$(json "$DB_NAME")" "$(json "$STORE_PATH")" "$BYTES" "$SHA" "$(json "$TOOL")" "$(json "$RCLONE_VERSION")" > "$TERMINATION_LOG"
`;

/**
 * Downloads a dump, refuses it unless its sha256 matches, empties the database (tables and views made after the
 * backup must not survive) and loads the dump.
 */
export const MYSQL_RESTORE_SCRIPT = PRELUDE + DB_ERROR_SENTENCE + DB_TOOLS + String.raw`
rclone copyto "store:$STORE_PATH" "$W/dump.sql.gz" 2> "$W/rclone.err" || fail "the dump could not be downloaded from the backup bucket" "$W/rclone.err"
if [ -n "\${EXPECTED_SHA256:-}" ]; then
  ACTUAL=$(sha256sum < "$W/dump.sql.gz" | cut -d ' ' -f 1)
  [ "$ACTUAL" = "$EXPECTED_SHA256" ] || fail "the dump's sha256 does not match the manifest; the backup is corrupt"
fi
gzip -t "$W/dump.sql.gz" 2> "$W/gzip.err" || fail "the dump is not a valid gzip file" "$W/gzip.err"
"$CLIENT" --defaults-extra-file="$W/client.cnf" --batch --skip-column-names "$DB_NAME" > "$W/drop.sql" 2> "$W/client.err" <<'SQL' || db_error "reading the tables of database $DB_NAME failed" "$W/client.err"
SELECT CONCAT('DROP ', IF(table_type = 'VIEW', 'VIEW', 'TABLE'), ' IF EXISTS ', CHAR(96),
              REPLACE(table_name, CHAR(96), CONCAT(CHAR(96), CHAR(96))), CHAR(96), ';')
FROM information_schema.tables WHERE table_schema = DATABASE() ORDER BY table_type = 'VIEW' DESC;
SQL
{ echo 'SET FOREIGN_KEY_CHECKS=0;'; cat "$W/drop.sql"; } \
  | "$CLIENT" --defaults-extra-file="$W/client.cnf" "$DB_NAME" 2> "$W/client.err" || db_error "emptying database $DB_NAME failed" "$W/client.err"
# The relation user of the target database is rarely the one that created the views, triggers and routines:
# definers become the restoring user, on the dump's own header lines only (row data is one INSERT per line).
gunzip -c "$W/dump.sql.gz" \
  | sed -e '/^\/\*!50/s/DEFINER=[^ *]*@[^ *]*/DEFINER=CURRENT_USER/g' -e '/^CREATE /s/DEFINER=[^ *]*@[^ *]*/DEFINER=CURRENT_USER/g' \
  | "$CLIENT" --defaults-extra-file="$W/client.cnf" --default-character-set=utf8mb4 "$DB_NAME" 2> "$W/client.err" || db_error "loading the dump into database $DB_NAME failed" "$W/client.err"
BYTES=$(wc -c < "$W/dump.sql.gz" | tr -d ' ')
TOOL=$("$CLIENT" --version 2>/dev/null | head -n 1)
printf '{"ok":true,"database":"%s","path":"%s","bytes":%s,"tool":"%s","rclone":"%s"}' \
  "$(json "$DB_NAME")" "$(json "$STORE_PATH")" "$BYTES" "$(json "$TOOL")" "$(json "$RCLONE_VERSION")" > "$TERMINATION_LOG"
`.replaceAll('\\${', '${');

// Object count, bytes and a digest of the md5 listing (sorted), so verify-backup can tell a changed copy.
const STORE_DIR_SUMMARY = String.raw`rclone size --json "store:$STORE_DIR" > "$W/size.json" 2> "$W/rclone.err" || fail "the copy in the backup bucket could not be measured" "$W/rclone.err"
OBJECTS=$(sed -n 's/.*"count":\([0-9]*\).*/\1/p' "$W/size.json")
BYTES=$(sed -n 's/.*"bytes":\([0-9]*\).*/\1/p' "$W/size.json")
rclone md5sum "store:$STORE_DIR" 2> "$W/rclone.err" | LC_ALL=C sort -k 2 > "$W/listing" || fail "the copy in the backup bucket could not be listed" "$W/rclone.err"
LISTING=$(sha256sum < "$W/listing" | cut -d ' ' -f 1)
`;

/** Mirrors one MinIO bucket into `store:$STORE_DIR`. */
export const MINIO_BACKUP_SCRIPT = PRELUDE + String.raw`
rclone copy "minio:$MINIO_BUCKET" "store:$STORE_DIR" 2> "$W/rclone.err" || {
  grep -q -e 'directory not found' -e 'NoSuchBucket' "$W/rclone.err" && fail "the MinIO bucket $MINIO_BUCKET does not exist" "$W/rclone.err"
  fail "copying MinIO bucket $MINIO_BUCKET to the backup bucket failed" "$W/rclone.err"
}
` + STORE_DIR_SUMMARY + String.raw`printf '{"ok":true,"bucket":"%s","path":"%s","objects":%s,"bytes":%s,"listingSha256":"%s","tool":"%s"}' \
  "$(json "$MINIO_BUCKET")" "$(json "$STORE_DIR")" "\${OBJECTS:-0}" "\${BYTES:-0}" "$LISTING" "$(json "$RCLONE_VERSION")" > "$TERMINATION_LOG"
`.replaceAll('\\${', '${');

/** Makes one MinIO bucket exactly the backup's copy (sync: objects made after the backup are removed), then checks. */
export const MINIO_RESTORE_SCRIPT = PRELUDE + STORE_DIR_SUMMARY + String.raw`
if [ -n "\${EXPECTED_SHA256:-}" ] && [ "$LISTING" != "$EXPECTED_SHA256" ]; then
  fail "the copy of MinIO bucket $MINIO_BUCKET in the backup bucket no longer matches the manifest; the backup is corrupt"
fi
rclone mkdir "minio:$MINIO_BUCKET" 2> "$W/rclone.err" || fail "MinIO bucket $MINIO_BUCKET could not be created" "$W/rclone.err"
rclone sync "store:$STORE_DIR" "minio:$MINIO_BUCKET" 2> "$W/rclone.err" || fail "copying the backup into MinIO bucket $MINIO_BUCKET failed" "$W/rclone.err"
rclone check "store:$STORE_DIR" "minio:$MINIO_BUCKET" 2> "$W/rclone.err" || fail "MinIO bucket $MINIO_BUCKET differs from the backup after the copy" "$W/rclone.err"
printf '{"ok":true,"bucket":"%s","path":"%s","objects":%s,"bytes":%s,"tool":"%s"}' \
  "$(json "$MINIO_BUCKET")" "$(json "$STORE_DIR")" "\${OBJECTS:-0}" "\${BYTES:-0}" "$(json "$RCLONE_VERSION")" > "$TERMINATION_LOG"
`.replaceAll('\\${', '${');
