#!/usr/bin/env bash
# faucet-low-balance.sh: alert when a coin-faucetd's payable balance falls below a threshold.
# Run from cron; see --help and docs/operations.md.
set -euo pipefail

prog=${0##*/}

usage() {
	cat <<USAGE
Usage: $prog --threshold COIN [options]

Reads the faucet's status (coin-faucet status, i.e. GET /api/status) and compares
faucet_balance (what the faucet can still pay: mature, unlocked outputs at their effective
value) with a threshold. Silent when the balance is at or above the threshold (unless
--verbose), so a cron job mails only when something is wrong.

Options (each also set by the environment variable shown):
  --threshold COIN   alert below this balance, in COIN (8 decimals at most) [COIN_FAUCET_MIN_BALANCE]
  --faucet URL       faucet base URL (default http://127.0.0.1:8080)       [COIN_FAUCET_URL]
  --timeout DURATION give up on the faucet after DURATION (default 20s)    [COIN_FAUCET_ALERT_TIMEOUT]
  --verbose          print the OK line on stdout too                       [COIN_FAUCET_ALERT_VERBOSE=1]
  --coin-faucet PATH the coin-faucet executable (default: coin-faucet in PATH) [COIN_FAUCET_BIN]
  -h, --help         this help

Exit status (one line on stderr, suitable for cron mail, for 1 and 2):
  0  balance >= threshold
  1  balance below the threshold ("faucet LOW: ...")
  2  faucet unreachable, unreadable answer, or usage error
USAGE
}

die_usage() {
	echo "$prog: $* (try --help)" >&2
	exit 2
}

# to_subunits COIN prints the amount in subunits (10^-8 COIN), or fails on malformed input.
to_subunits() {
	local int frac
	[[ $1 =~ ^([0-9]{1,11})(\.([0-9]{1,8}))?$ ]] || return 1
	int=${BASH_REMATCH[1]}
	frac=${BASH_REMATCH[3]}
	frac=${frac}00000000
	echo $((10#$int * 100000000 + 10#${frac:0:8}))
}

# json_field NAME prints the value of a flat string or number field of the JSON on stdin.
json_field() {
	sed -n 's/.*"'"$1"'"[[:space:]]*:[[:space:]]*"\{0,1\}\([^",}]*\)"\{0,1\}.*/\1/p' | head -n 1
}

threshold=${COIN_FAUCET_MIN_BALANCE:-}
faucet=${COIN_FAUCET_URL:-http://127.0.0.1:8080}
timeout=${COIN_FAUCET_ALERT_TIMEOUT:-20s}
verbose=${COIN_FAUCET_ALERT_VERBOSE:-0}
faucet_bin=${COIN_FAUCET_BIN:-coin-faucet}

while [ $# -gt 0 ]; do
	case $1 in
	-h | --help)
		usage
		exit 0
		;;
	--threshold | --faucet | --timeout | --coin-faucet)
		[ $# -ge 2 ] || die_usage "$1 needs a value"
		case $1 in
		--threshold) threshold=$2 ;;
		--faucet) faucet=$2 ;;
		--timeout) timeout=$2 ;;
		--coin-faucet) faucet_bin=$2 ;;
		esac
		shift 2
		;;
	--threshold=* | --faucet=* | --timeout=* | --coin-faucet=*)
		v=${1#*=}
		case $1 in
		--threshold=*) threshold=$v ;;
		--faucet=*) faucet=$v ;;
		--timeout=*) timeout=$v ;;
		--coin-faucet=*) faucet_bin=$v ;;
		esac
		shift
		;;
	-v | --verbose)
		verbose=1
		shift
		;;
	*) die_usage "unknown argument: $1" ;;
	esac
done

[ -n "$threshold" ] || die_usage "--threshold (or COIN_FAUCET_MIN_BALANCE) is required"
min=$(to_subunits "$threshold") || die_usage "--threshold: not an amount of COIN: $threshold"
command -v "$faucet_bin" >/dev/null 2>&1 || die_usage "coin-faucet not found: $faucet_bin (set --coin-faucet or COIN_FAUCET_BIN)"

errf=$(mktemp)
trap 'rm -f "$errf"' EXIT
if ! status=$("$faucet_bin" --faucet "$faucet" --timeout "$timeout" --json status 2>"$errf"); then
	reason=$(sed -e 's/^error: //' "$errf" | head -n 1)
	echo "faucet UNREACHABLE: $faucet: ${reason:-coin-faucet status failed}" >&2
	exit 2
fi

balance=$(json_field faucet_balance <<<"$status")
address=$(json_field faucet_address <<<"$status")
if ! have=$(to_subunits "$balance"); then
	echo "faucet UNREACHABLE: $faucet: no faucet_balance in its status" >&2
	exit 2
fi

if [ "$have" -lt "$min" ]; then
	echo "faucet LOW: $faucet balance $balance COIN is below $threshold COIN; fund ${address:-its address}" >&2
	exit 1
fi
if [ "$verbose" = 1 ]; then
	echo "faucet OK: $faucet balance $balance COIN (threshold $threshold COIN)"
fi
exit 0
