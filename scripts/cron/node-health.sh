#!/usr/bin/env bash
# node-health.sh: a monitoring check of a coin-node (Nagios / monitoring-plugins exit codes).
# Run from cron or a monitoring agent; see --help and docs/operations.md.
set -euo pipefail

prog=${0##*/}
OK=0 WARNING=1 CRITICAL=2 UNKNOWN=3

usage() {
	cat <<USAGE
Usage: $prog [options]

Checks a coin-node through coin-cli (getsyncstatus, getblockchaininfo, getblockheader of the
tip) and prints one status line, "COIN NODE <STATE> - ... | perfdata":
  reachable      the node answers RPC                              else CRITICAL
  not stuck      the tip is younger than --warn-age minutes        else WARNING
                 the tip is younger than --crit-age minutes, or the
                 height advanced since the previous run            else CRITICAL
                 (the previous run's height and hash, and when they last changed, are kept
                 in --state-file; the node syncing from peers is a WARNING, never stuck)
  peers          at least --min-peers connected                    else WARNING
                 (CRITICAL when none is connected and --min-peers > 0; use 0 on regtest)
  disk           with --data-dir: free space of its file system
                 above --warn-disk / --crit-disk percent           else WARNING / CRITICAL
                 (coin-node itself stops at --min-free-disk, default 20%)

Options (each also set by the environment variable shown):
  --rpc URL           node RPC URL (default: coin-cli's, from --network)  [COIN_RPC]
  --network NET       mainnet, testnet or regtest                           [COIN_NETWORK]
  --warn-age MIN      tip age for WARNING, minutes (default 30)             [COIN_HEALTH_WARN_AGE]
  --crit-age MIN      tip age for CRITICAL, minutes (default 60)            [COIN_HEALTH_CRIT_AGE]
  --min-peers N       fewest connected peers (default 1)                    [COIN_HEALTH_MIN_PEERS]
  --data-dir DIR      the node's data dir, for the disk check (default: none) [COIN_DATA_DIR]
  --warn-disk PCT     free disk percent for WARNING (default 30)            [COIN_HEALTH_WARN_DISK]
  --crit-disk PCT     free disk percent for CRITICAL (default 25)           [COIN_HEALTH_CRIT_DISK]
  --state-file FILE   where the previous run's height is kept (default
                      \${XDG_STATE_HOME:-~/.local/state}/coin/node-health-<rpc>.state)
                                                                            [COIN_HEALTH_STATE_FILE]
  --timeout DURATION  give up on an RPC call after DURATION (default 10s)   [COIN_HEALTH_TIMEOUT]
  --coin-cli PATH     the coin-cli executable (default: coin-cli in PATH)   [COIN_CLI_BIN]
  -h, --help          this help

Exit status: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN (usage error, coin-cli missing, an
answer that cannot be read, a state file that cannot be written).
USAGE
}

unknown() {
	echo "COIN NODE UNKNOWN - $*"
	exit $UNKNOWN
}

# json_field NAME prints the value of a flat string, number or boolean field of the JSON on stdin.
json_field() {
	sed -n 's/.*"'"$1"'"[[:space:]]*:[[:space:]]*"\{0,1\}\([^",}]*\)"\{0,1\}.*/\1/p' | head -n 1
}

is_uint() { [[ $1 =~ ^[0-9]+$ ]]; }

rpc=${COIN_RPC:-}
network=${COIN_NETWORK:-}
warn_age=${COIN_HEALTH_WARN_AGE:-30}
crit_age=${COIN_HEALTH_CRIT_AGE:-60}
min_peers=${COIN_HEALTH_MIN_PEERS:-1}
data_dir=${COIN_DATA_DIR:-}
warn_disk=${COIN_HEALTH_WARN_DISK:-30}
crit_disk=${COIN_HEALTH_CRIT_DISK:-25}
state_file=${COIN_HEALTH_STATE_FILE:-}
timeout=${COIN_HEALTH_TIMEOUT:-10s}
cli_bin=${COIN_CLI_BIN:-coin-cli}

while [ $# -gt 0 ]; do
	case $1 in
	-h | --help)
		usage
		exit $OK
		;;
	--*=*)
		opt=${1%%=*}
		val=${1#*=}
		shift
		set -- "$opt" "$val" "$@"
		continue
		;;
	--rpc | --network | --warn-age | --crit-age | --min-peers | --data-dir | --warn-disk | --crit-disk | --state-file | --timeout | --coin-cli)
		[ $# -ge 2 ] || unknown "$1 needs a value (try --help)"
		case $1 in
		--rpc) rpc=$2 ;;
		--network) network=$2 ;;
		--warn-age) warn_age=$2 ;;
		--crit-age) crit_age=$2 ;;
		--min-peers) min_peers=$2 ;;
		--data-dir) data_dir=$2 ;;
		--warn-disk) warn_disk=$2 ;;
		--crit-disk) crit_disk=$2 ;;
		--state-file) state_file=$2 ;;
		--timeout) timeout=$2 ;;
		--coin-cli) cli_bin=$2 ;;
		esac
		shift 2
		;;
	*) unknown "unknown argument: $1 (try --help)" ;;
	esac
done

for v in warn_age crit_age min_peers warn_disk crit_disk; do
	is_uint "${!v}" || unknown "--${v/_/-} must be a whole number, not '${!v}'"
done
command -v "$cli_bin" >/dev/null 2>&1 || unknown "coin-cli not found: $cli_bin (set --coin-cli or COIN_CLI_BIN)"

cli=("$cli_bin" --timeout "$timeout")
[ -z "$network" ] || cli+=(--network "$network")
[ -z "$rpc" ] || cli+=(--rpc "$rpc")
target=${rpc:-${network:-mainnet} default RPC port}

if [ -z "$state_file" ]; then
	key=${rpc:-${network:-mainnet}}
	key=${key#*://}
	state_file=${XDG_STATE_HOME:-$HOME/.local/state}/coin/node-health-${key//[^A-Za-z0-9._-]/_}.state
fi

errf=$(mktemp)
outf=$(mktemp)
trap 'rm -f "$errf" "$outf"' EXIT

# call METHOD [ARGS...]: the result in $result; on failure the check is CRITICAL.
call() {
	if ! "${cli[@]}" "$@" >"$outf" 2>"$errf"; then
		echo "COIN NODE CRITICAL - node unreachable at $target: $1: $(grep -v '^error code' "$errf" | sed -e 's/^error[^:]*: //' | tr '\n' ' ' | sed -e 's/\. .*//; s/ *$//')"
		exit $CRITICAL
	fi
	result=$(<"$outf")
}

call getsyncstatus
sync=$result
call getblockchaininfo
info=$result
height=$(json_field height <<<"$info")
hash=$(json_field best_block_hash <<<"$info")
peers=$(json_field peer_count <<<"$info")
ibd=$(json_field initial_block_download <<<"$info")
syncing=$(json_field syncing <<<"$sync")
if ! is_uint "$height" || ! is_uint "$peers" || ! [[ $hash =~ ^[0-9a-f]{64}$ ]]; then
	unknown "cannot read getblockchaininfo from $target"
fi
call getblockheader "$hash"
tip_time=$(json_field timestamp <<<"$result")
is_uint "$tip_time" || unknown "cannot read the tip's header from $target"

now=$(date +%s)
tip_age=$((now - tip_time))
[ "$tip_age" -ge 0 ] || tip_age=0

# The previous run: height, hash and when they last changed.
prev_height='' prev_hash='' changed=$now
if [ -r "$state_file" ]; then
	prev_height=$(sed -n 's/^height=//p' "$state_file")
	prev_hash=$(sed -n 's/^hash=//p' "$state_file")
	prev_changed=$(sed -n 's/^changed=//p' "$state_file")
	if [ "$prev_hash" = "$hash" ] && is_uint "$prev_changed"; then
		changed=$prev_changed
	fi
fi
advanced=no
if is_uint "$prev_height" && [ "$prev_hash" != "$hash" ]; then
	advanced=yes
fi
unchanged_for=$((now - changed))
mkdir -p "$(dirname "$state_file")" 2>/dev/null || true
if ! { printf 'height=%s\nhash=%s\nchanged=%s\n' "$height" "$hash" "$changed" >"$state_file.tmp" && mv -f "$state_file.tmp" "$state_file"; } 2>/dev/null; then
	unknown "cannot write the state file $state_file"
fi

status=$OK
problems=()
raise() {
	[ "$1" -le "$status" ] || status=$1
	problems+=("$2")
}

minutes() { echo "$(($1 / 60)) min"; }

if [ "$syncing" = true ] || [ "$ibd" = true ]; then
	raise $WARNING "syncing from peers (tip $(minutes "$tip_age") old)"
elif [ "$tip_age" -ge $((crit_age * 60)) ] && [ "$advanced" = no ]; then
	if is_uint "$prev_height"; then
		raise $CRITICAL "stuck: tip $(minutes "$tip_age") old, height $height unchanged for $(minutes "$unchanged_for") (limit $crit_age min)"
	else
		raise $CRITICAL "stuck: tip $(minutes "$tip_age") old (limit $crit_age min)"
	fi
elif [ "$tip_age" -ge $((warn_age * 60)) ]; then
	raise $WARNING "tip $(minutes "$tip_age") old (limit $warn_age min)"
fi

if [ "$peers" -lt "$min_peers" ]; then
	if [ "$peers" -eq 0 ]; then
		raise $CRITICAL "no peers (min $min_peers)"
	else
		raise $WARNING "$peers peers (min $min_peers)"
	fi
fi

disk_perf=''
disk_text=''
if [ -n "$data_dir" ]; then
	if ! df_line=$(df -P -k "$data_dir" 2>/dev/null | awk 'NR == 2 { print $2, $4 }') || [ -z "$df_line" ]; then
		unknown "cannot read the free space of $data_dir"
	fi
	read -r total avail <<<"$df_line"
	free=$((total > 0 ? avail * 100 / total : 0))
	disk_text=", disk ${free}% free"
	disk_perf=" disk_free=${free}%;$warn_disk;$crit_disk"
	if [ "$free" -lt "$crit_disk" ]; then
		raise $CRITICAL "disk of $data_dir ${free}% free (limit ${crit_disk}%)"
	elif [ "$free" -lt "$warn_disk" ]; then
		raise $WARNING "disk of $data_dir ${free}% free (limit ${warn_disk}%)"
	fi
fi

names=(OK WARNING CRITICAL UNKNOWN)
summary="height $height, tip $(minutes "$tip_age") old, $peers peers$disk_text"
for ((i = ${#problems[@]} - 1; i >= 0; i--)); do
	summary="${problems[i]}; $summary"
done
echo "COIN NODE ${names[$status]} - $summary | height=$height tip_age=${tip_age}s;$((warn_age * 60));$((crit_age * 60)) peers=$peers;$min_peers$disk_perf"
exit "$status"
