#!/usr/bin/env bash
# backup-datadir.sh: a consistent, dated tar.gz of a coin-node, coin-wallet or coin-faucetd
# data directory, keeping the last N. See --help and docs/operations.md.
set -euo pipefail

prog=${0##*/}
export LC_ALL=C

usage() {
	cat <<USAGE
Usage: $prog --data-dir DIR --dest DIR [options]

Writes DEST/NAME-YYYYMMDDTHHMMSSZ.tar.gz (mode 0600, UTC time) of everything in DIR and keeps
the newest --keep archives of NAME in DEST (older ones are deleted; other files are never
touched). Restore: mkdir NEWDIR && tar -C NEWDIR -xzf ARCHIVE.

Consistency. Each tool keeps its state in LevelDB (goleveldb): the node in DIR/db, the
faucet in DIR/db, a wallet in the wallet dir itself. A LevelDB that is open is being
written (log, tables, MANIFEST, compactions), and copying its files while it is open is not
guaranteed to give a database that opens, so this script never does. It takes the
LevelDB's own lock (flock on every LOCK file under DIR) for the whole copy:
  - a LevelDB that no process has open (a stopped node or faucet, a wallet between two
    coin-wallet commands) is copied, and no tool can open it until the copy is done;
  - a LevelDB that is open (a running coin-node or coin-faucetd) is refused: exit 1, nothing
    written. There is no stop-free backup of a running node's LevelDB.
To back up a running service, give --stop-cmd and --start-cmd (for example
"systemctl stop coin-node" / "systemctl start coin-node"): the service is stopped, its
locks are waited for, the copy made, and the service started again, even when the copy
failed. A node's chain can also be synced again from peers; the state that cannot be
recovered otherwise is a wallet dir (which a backup of the mnemonic also covers) and a
faucet's claims (DIR/db).

Options (each also set by the environment variable shown):
  --data-dir DIR      the data directory to back up (required)          [COIN_BACKUP_DATA_DIR]
  --dest DIR          where the archives go (created if missing; required) [COIN_BACKUP_DEST]
  --keep N            archives of NAME to keep (default 7; 0 keeps all) [COIN_BACKUP_KEEP]
  --name NAME         archive name prefix (default: DIR's base name)    [COIN_BACKUP_NAME]
  --stop-cmd CMD      shell command that stops the service using DIR    [COIN_BACKUP_STOP_CMD]
  --start-cmd CMD     shell command that starts it again                [COIN_BACKUP_START_CMD]
  --wait SECONDS      how long to wait for each LevelDB lock, after
                      --stop-cmd if given (default 10)                  [COIN_BACKUP_WAIT]
  -h, --help          this help

Output: one line, "backup ARCHIVE (SIZE bytes, N kept)". Errors on stderr.

Exit status:
  0  archive written (and older ones pruned)
  1  a LevelDB is in use (open by a running process), the copy failed, or --stop-cmd /
     --start-cmd failed
  2  usage error
USAGE
}

die() {
	local code=$1
	shift
	echo "$prog: $*" >&2
	exit "$code"
}
die_usage() { die 2 "$* (try --help)"; }

data_dir=${COIN_BACKUP_DATA_DIR:-}
dest=${COIN_BACKUP_DEST:-}
keep=${COIN_BACKUP_KEEP:-7}
name=${COIN_BACKUP_NAME:-}
stop_cmd=${COIN_BACKUP_STOP_CMD:-}
start_cmd=${COIN_BACKUP_START_CMD:-}
wait_s=${COIN_BACKUP_WAIT:-10}

while [ $# -gt 0 ]; do
	case $1 in
	-h | --help)
		usage
		exit 0
		;;
	--*=*)
		opt=${1%%=*}
		val=${1#*=}
		shift
		set -- "$opt" "$val" "$@"
		;;
	--data-dir | --dest | --keep | --name | --stop-cmd | --start-cmd | --wait)
		[ $# -ge 2 ] || die_usage "$1 needs a value"
		case $1 in
		--data-dir) data_dir=$2 ;;
		--dest) dest=$2 ;;
		--keep) keep=$2 ;;
		--name) name=$2 ;;
		--stop-cmd) stop_cmd=$2 ;;
		--start-cmd) start_cmd=$2 ;;
		--wait) wait_s=$2 ;;
		esac
		shift 2
		;;
	*) die_usage "unknown argument: $1" ;;
	esac
done

[ -n "$data_dir" ] || die_usage "--data-dir (or COIN_BACKUP_DATA_DIR) is required"
[ -n "$dest" ] || die_usage "--dest (or COIN_BACKUP_DEST) is required"
[ -d "$data_dir" ] || die_usage "no such directory: $data_dir"
[[ $keep =~ ^[0-9]+$ ]] || die_usage "--keep must be a whole number"
[[ $wait_s =~ ^[0-9]+$ ]] || die_usage "--wait must be a whole number of seconds"
data_dir=$(cd "$data_dir" && pwd -P)
name=${name:-$(basename "$data_dir")}
[[ $name =~ ^[A-Za-z0-9._-]+$ ]] || die_usage "--name may hold letters, digits, . _ - only"
command -v flock >/dev/null 2>&1 || die 2 "flock (util-linux) is required"

umask 077
mkdir -p "$dest"
dest=$(cd "$dest" && pwd -P)
case $dest/ in
"$data_dir"/*) die_usage "--dest must not be inside --data-dir" ;;
esac

partial=''
stopped=no
finish() {
	local rc=$?
	[ -z "$partial" ] || rm -f "$partial"
	if [ "$stopped" = yes ]; then
		stopped=no
		if ! sh -c "$start_cmd" >&2; then
			echo "$prog: --start-cmd failed: $start_cmd" >&2
			rc=1
		fi
	fi
	exit "$rc"
}
trap finish EXIT
trap 'exit 1' INT TERM HUP

if [ -n "$stop_cmd" ]; then
	[ -n "$start_cmd" ] || die_usage "--stop-cmd needs --start-cmd"
	sh -c "$stop_cmd" >&2 || die 1 "--stop-cmd failed: $stop_cmd"
	stopped=yes
fi

# Every LevelDB under the data dir, locked for the whole copy.
locks=()
while IFS= read -r -d '' lock; do
	exec {fd}<"$lock"
	if ! flock -x -w "$wait_s" "$fd"; then
		die 1 "refusing: the LevelDB in $(dirname "$lock") is open by a running process (coin-node, coin-faucetd or coin-wallet); stop it, or give --stop-cmd and --start-cmd"
	fi
	locks+=("$fd")
done < <(find "$data_dir" -name LOCK -type f -print0)

stamp=$(date -u +%Y%m%dT%H%M%SZ)
while [ -e "$dest/$name-$stamp.tar.gz" ]; do
	sleep 1
	stamp=$(date -u +%Y%m%dT%H%M%SZ)
done
archive=$dest/$name-$stamp.tar.gz
partial=$dest/.$name-$stamp.tar.gz.partial

tar -C "$data_dir" -czf "$partial" . || die 1 "tar of $data_dir failed"
tar -tzf "$partial" >/dev/null || die 1 "the archive does not read back: $partial"
chmod 0600 "$partial"
sync "$partial"
mv -f "$partial" "$archive"
partial=''
sync "$dest"

# The copy is made: release the LevelDBs, start the service again.
for fd in "${locks[@]}"; do
	exec {fd}<&-
done
if [ "$stopped" = yes ]; then
	stopped=no
	sh -c "$start_cmd" >&2 || die 1 "backup $archive written, but --start-cmd failed: $start_cmd"
fi

# Keep the newest --keep archives of this name (only names this script writes).
kept=0
while IFS= read -r old; do
	[[ $old =~ ^"$name"-[0-9]{8}T[0-9]{6}Z\.tar\.gz$ ]] || continue
	if [ "$keep" -gt 0 ] && [ "$kept" -ge "$keep" ]; then
		rm -f "$dest/$old"
	else
		kept=$((kept + 1))
	fi
done < <(find "$dest" -maxdepth 1 -type f -name "$name-*.tar.gz" -printf '%f\n' | sort -r)

echo "backup $archive ($(stat -c %s "$archive") bytes, $kept kept)"
