#!/usr/bin/env bash
# wallet-payout.sh: pay the rows of a CSV (payout_id,address,amount) from a coin-wallet, each
# payout id at most once, safe to re-run after a crash or on every cron tick.
# See --help and docs/operations.md.
set -euo pipefail

prog=${0##*/}
export LC_ALL=C

usage() {
	cat <<USAGE
Usage: $prog --csv FILE --passphrase-file FILE [options]

Pays every row of a CSV file "payout_id,address,amount" (amount in COIN; blank lines, lines
starting with # and a header row starting with payout_id are skipped) with coin-wallet send,
and records each payout in a ledger file next to the CSV. A payout id in the ledger is never
paid again, so the script can run from cron on a CSV that grows.

The ledger (default FILE.ledger, tab-separated: payout_id, status, txid, address, amount,
UTC time) is rewritten atomically (temporary file, fsync, rename) around each send:
  1. "pending" is recorded first, with the intent (address, amount) and, in LEDGER.d/, a
     snapshot of the wallet's unspent outputs and of the payee's outputs;
  2. coin-wallet send broadcasts;
  3. "done" is recorded with the txid.
A run that finds a "pending" payout (a crash, a kill or a lost answer between 1 and 3) does
not pay it again blindly: it asks the node whether the payout was broadcast, from the
wallet's side (has an output of the snapshot been spent since?) and from the payee's (is
there a new output of exactly that amount to that address, or a new wallet output - the
change - from a transaction that pays that address?). Paid: recorded "done" with the txid
found. Clearly not broadcast (no snapshot output spent, no such transaction): the pending
entry is dropped and the payout made now. Spent but no transaction found: recorded
"unresolved" and never paid automatically; fix the ledger by hand (exit status 3).
coin-wallet keeps its unconfirmed transactions and re-sends one the node forgot (a mempool
dropped on restart) before the check, which otherwise works from the node's view of the
outputs; so this relies on two conditions: the wallet is used only by this job (nothing
else spends from it), and the wallet directory keeps its record of the payout (it is not
restored from an older backup meanwhile); see docs/operations.md.

Two runs never overlap: the script holds flock(1) on a lock file (default LEDGER.lock) for
its whole run; a run that finds it held waits --lock-wait seconds, then gives up (exit 4).

The passphrase is read by coin-wallet from --passphrase-file; it is never in argv or the
environment of this script.

Options (each also set by the environment variable shown):
  --csv FILE              payouts: payout_id,address,amount             [COIN_PAYOUT_CSV]
  --passphrase-file FILE  the wallet's passphrase (required)            [COIN_WALLET_PASSPHRASE_FILE]
  --wallet-dir DIR        the coin-wallet dir (default: coin-wallet's)  [COIN_WALLET_DIR]
  --rpc URL               node RPC URL (default: from --network)         [COIN_RPC]
  --network NET           mainnet, testnet or regtest                    [COIN_NETWORK]
  --fee-rate N            fee in subunits per byte (default: coin-wallet's) [COIN_PAYOUT_FEE_RATE]
  --ledger FILE           the ledger (default: the CSV's path + .ledger)  [COIN_PAYOUT_LEDGER]
  --lock-file FILE        the lock (default: the ledger's path + .lock)  [COIN_PAYOUT_LOCK_FILE]
  --lock-wait SECONDS     wait this long for a running payout (default 0) [COIN_PAYOUT_LOCK_WAIT]
  --dry-run               print what would be paid, pay nothing          [COIN_PAYOUT_DRY_RUN=1]
  --coin-wallet PATH      the coin-wallet executable (default: in PATH)  [COIN_WALLET_BIN]
  --coin-cli PATH         the coin-cli executable (default: in PATH)     [COIN_CLI_BIN]
  -h, --help              this help

Output: one line per payout made or resolved ("paid ID ADDRESS AMOUNT TXID", "resolved ID ...");
nothing when there is nothing to pay. Errors on stderr.

Exit status:
  0  every row is paid (now or before)
  1  a send failed and nothing was spent (the node refused it, insufficient funds, node
     unreachable); the payouts before it are recorded, the next run retries from it
  2  usage error, malformed CSV, or a CSV row that contradicts the ledger
  3  a pending payout could not be resolved (marked "unresolved"; see above)
  4  another run holds the lock
USAGE
}

die() {
	local code=$1
	shift
	echo "$prog: $*" >&2
	exit "$code"
}
die_usage() { die 2 "$* (try --help)"; }

# to_subunits COIN prints the amount in subunits (10^-8 COIN), or fails on malformed input.
to_subunits() {
	local int frac
	[[ $1 =~ ^([0-9]{1,11})(\.([0-9]{1,8}))?$ ]] || return 1
	int=${BASH_REMATCH[1]}
	frac=${BASH_REMATCH[3]}00000000
	echo $((10#$int * 100000000 + 10#${frac:0:8}))
}

# trim S prints S without leading and trailing white space.
trim() {
	local s=$1
	s=${s#"${s%%[![:space:]]*}"}
	printf '%s' "${s%"${s##*[![:space:]]}"}"
}

csv=${COIN_PAYOUT_CSV:-}
passfile=${COIN_WALLET_PASSPHRASE_FILE:-}
wallet_dir=${COIN_WALLET_DIR:-}
rpc=${COIN_RPC:-}
network=${COIN_NETWORK:-}
fee_rate=${COIN_PAYOUT_FEE_RATE:-}
ledger=${COIN_PAYOUT_LEDGER:-}
lock_file=${COIN_PAYOUT_LOCK_FILE:-}
lock_wait=${COIN_PAYOUT_LOCK_WAIT:-0}
dry_run=${COIN_PAYOUT_DRY_RUN:-0}
wallet_bin=${COIN_WALLET_BIN:-coin-wallet}
cli_bin=${COIN_CLI_BIN:-coin-cli}

while [ $# -gt 0 ]; do
	case $1 in
	-h | --help)
		usage
		exit 0
		;;
	--dry-run)
		dry_run=1
		shift
		;;
	--*=*)
		opt=${1%%=*}
		val=${1#*=}
		shift
		set -- "$opt" "$val" "$@"
		;;
	--csv | --passphrase-file | --wallet-dir | --rpc | --network | --fee-rate | --ledger | --lock-file | --lock-wait | --coin-wallet | --coin-cli)
		[ $# -ge 2 ] || die_usage "$1 needs a value"
		case $1 in
		--csv) csv=$2 ;;
		--passphrase-file) passfile=$2 ;;
		--wallet-dir) wallet_dir=$2 ;;
		--rpc) rpc=$2 ;;
		--network) network=$2 ;;
		--fee-rate) fee_rate=$2 ;;
		--ledger) ledger=$2 ;;
		--lock-file) lock_file=$2 ;;
		--lock-wait) lock_wait=$2 ;;
		--coin-wallet) wallet_bin=$2 ;;
		--coin-cli) cli_bin=$2 ;;
		esac
		shift 2
		;;
	*) die_usage "unknown argument: $1" ;;
	esac
done

[ -n "$csv" ] || die_usage "--csv (or COIN_PAYOUT_CSV) is required"
{ [ -f "$csv" ] && [ -r "$csv" ]; } || die_usage "cannot read the CSV $csv"
if [ "$dry_run" != 1 ]; then
	[ -n "$passfile" ] || die_usage "--passphrase-file (or COIN_WALLET_PASSPHRASE_FILE) is required"
	{ [ -f "$passfile" ] && [ -r "$passfile" ]; } || die_usage "cannot read the passphrase file $passfile"
fi
[[ $lock_wait =~ ^[0-9]+$ ]] || die_usage "--lock-wait must be a whole number of seconds"
[ -z "$fee_rate" ] || [[ $fee_rate =~ ^[0-9]+$ ]] || die_usage "--fee-rate must be a whole number"
command -v "$wallet_bin" >/dev/null 2>&1 || die_usage "coin-wallet not found: $wallet_bin (set --coin-wallet or COIN_WALLET_BIN)"
command -v "$cli_bin" >/dev/null 2>&1 || die_usage "coin-cli not found: $cli_bin (set --coin-cli or COIN_CLI_BIN)"
command -v flock >/dev/null 2>&1 || die_usage "flock (util-linux) is required"
ledger=${ledger:-$csv.ledger}
lock_file=${lock_file:-$ledger.lock}
snapdir=$ledger.d
ledger_dir=$(dirname "$ledger")

umask 077

# Tool command lines: the node and wallet options given here, else the tools' own environment.
net=()
[ -z "$network" ] || net+=(--network "$network")
[ -z "$rpc" ] || net+=(--rpc "$rpc")
cli=("$cli_bin" "${net[@]}")
wallet=("$wallet_bin" "${net[@]}")
[ -z "$wallet_dir" ] || wallet+=(--wallet-dir "$wallet_dir")

# One run at a time. The lock's descriptor is inherited by coin-wallet, so a send still
# running after this script was killed keeps the lock until it ends.
exec {lock_fd}>>"$lock_file"
if ! flock -w "$lock_wait" "$lock_fd"; then
	die 4 "another payout run holds $lock_file; not running"
fi

errf=$(mktemp)
trap 'rm -f "$errf"' EXIT

# --- the CSV ---------------------------------------------------------------------------
ids=()
declare -A row_addr=() row_amount=()
lineno=0
while IFS= read -r line || [ -n "$line" ]; do
	lineno=$((lineno + 1))
	line=${line%$'\r'}
	[[ $line =~ ^[[:space:]]*(#|$) ]] && continue
	IFS=, read -r id addr amount extra <<<"$line"
	id=$(trim "$id")
	addr=$(trim "${addr:-}")
	amount=$(trim "${amount:-}")
	if [ "$lineno" -eq 1 ] && [ "$id" = payout_id ]; then
		continue
	fi
	[ -z "${extra:-}" ] || die 2 "$csv:$lineno: more than three fields"
	[[ $id =~ ^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$ ]] || die 2 "$csv:$lineno: bad payout_id '$id' (letters, digits, . _ -)"
	[[ $addr =~ ^[a-z0-9]{8,120}$ ]] || die 2 "$csv:$lineno: bad address '$addr'"
	{ sub=$(to_subunits "$amount") && [ "$sub" -gt 0 ]; } || die 2 "$csv:$lineno: bad amount '$amount' (COIN, at most 8 decimals, not zero)"
	if [ -n "${row_addr[$id]+x}" ]; then
		if [ "${row_addr[$id]}" != "$addr" ] || [ "$(to_subunits "${row_amount[$id]}")" != "$sub" ]; then
			die 2 "$csv:$lineno: payout_id $id appears twice with different rows"
		fi
		continue
	fi
	ids+=("$id")
	row_addr[$id]=$addr
	row_amount[$id]=$amount
done <"$csv"

# --- the ledger ------------------------------------------------------------------------
declare -A led_status=() led_addr=() led_amount=()
load_ledger() {
	led_status=() led_addr=() led_amount=()
	[ -f "$ledger" ] || return 0
	local id st ad am _
	while IFS=$'\t' read -r id st _ ad am _; do
		[[ -z $id || $id == \#* ]] && continue
		led_status[$id]=$st
		led_addr[$id]=$ad
		led_amount[$id]=$am
	done <"$ledger"
}

# ledger_put ID STATUS TXID ADDRESS AMOUNT replaces ID's line atomically; ledger_put ID
# with nothing else removes it.
ledger_put() {
	local id=$1 tmp=$ledger.tmp.$$
	{
		if [ -f "$ledger" ]; then
			awk -F'\t' -v id="$id" '$1 != id' "$ledger"
		else
			printf '# payout_id\tstatus\ttxid\taddress\tamount\ttime (written by %s)\n' "$prog"
		fi
		if [ $# -gt 1 ]; then
			printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
		fi
	} >"$tmp"
	sync "$tmp"
	mv -f "$tmp" "$ledger"
	sync "$ledger_dir"
	load_ledger
}

load_ledger
for id in "${ids[@]}"; do
	[ -n "${led_status[$id]+x}" ] || continue
	if [ "${led_addr[$id]}" != "${row_addr[$id]}" ] ||
		[ "$(to_subunits "${led_amount[$id]}")" != "$(to_subunits "${row_amount[$id]}")" ]; then
		die 2 "payout_id $id: the ledger has ${led_addr[$id]} ${led_amount[$id]} (${led_status[$id]}), the CSV ${row_addr[$id]} ${row_amount[$id]}: a paid row must not change"
	fi
done

# --- the node's view -------------------------------------------------------------------

# outpoints: the "txid:index value" of each object of a JSON array of outputs on stdin.
outpoints() {
	awk '
		/^[[:space:]]*"[a-z_]+":/ {
			line = $0
			sub(/^[[:space:]]*"/, "", line)
			key = line; sub(/".*/, "", key)
			val = line; sub(/^[^:]*:[[:space:]]*/, "", val); sub(/,[[:space:]]*$/, "", val); gsub(/"/, "", val)
			f[key] = val
		}
		/^[[:space:]]*}/ { if ("txid" in f) print f["txid"] ":" f["index"], f["value"]; delete f }
	'
}

# wallet_outpoints: the wallet's unspent outputs (the node's pending view), one txid:index a line, sorted.
wallet_outpoints() {
	local out
	out=$("${wallet[@]}" utxos --json 2>"$errf") || die 1 "coin-wallet utxos: $(tr '\n' ' ' <"$errf")"
	outpoints <<<"$out" | awk '{ print $1 }' | sort -u
}

# dest_outpoints ADDRESS: the address's unspent outputs with mempool, "txid:index value", sorted.
dest_outpoints() {
	local out
	out=$("${cli[@]}" getutxosbyaddress "$1" true 2>"$errf") || die 1 "coin-cli getutxosbyaddress $1: $(tr '\n' ' ' <"$errf")"
	outpoints <<<"$out" | sort -u
}

# tx_known TXID: 0 if the node knows the transaction, 1 if it answers that it does not; a
# node that cannot be asked ends the run.
tx_known() {
	if "${cli[@]}" gettransaction "$1" >/dev/null 2>"$errf"; then
		return 0
	fi
	grep -q '^error code:' "$errf" || die 1 "coin-cli gettransaction: $(tr '\n' ' ' <"$errf")"
	return 1
}

# pays_address TXID PUBKEYHASH: whether the transaction has an output to that key hash.
pays_address() {
	local hex
	if ! hex=$("${cli[@]}" getrawtransaction "$1" 2>"$errf"); then
		grep -q '^error code:' "$errf" || die 1 "coin-cli getrawtransaction: $(tr '\n' ' ' <"$errf")"
		return 1
	fi
	[[ $hex == *"$2"* ]]
}

pubkey_hash() {
	local out pkh
	out=$("${cli[@]}" validateaddress "$1" 2>"$errf") || die 1 "coin-cli validateaddress $1: $(tr '\n' ' ' <"$errf")"
	pkh=$(sed -n 's/.*"pubkey_hash"[[:space:]]*:[[:space:]]*"\([0-9a-f]*\)".*/\1/p' <<<"$out")
	[[ $pkh =~ ^[0-9a-f]{64}$ ]] || die 2 "$1 is not a valid address for this node's network"
	echo "$pkh"
}

# resolve ID: decide a pending payout from its snapshot. Records "done" (paid) or drops the
# entry (not paid); records "unresolved" when it cannot tell. Prints the outcome.
resolved=''
resolve() {
	local id=$1 addr=${led_addr[$1]} amount=${led_amount[$1]} want pkh now dest spent=0 op value tx found=''
	want=$(to_subunits "$amount")
	if [ ! -f "$snapdir/$id.wallet" ] || [ ! -f "$snapdir/$id.dest" ]; then
		# The snapshot is written before "pending"; without it the entry is not ours to decide.
		ledger_put "$id" unresolved - "$addr" "$amount"
		resolved=unresolved
		echo "unresolved $id $addr $amount: pending without its snapshot in $snapdir; check the wallet and fix $ledger by hand" >&2
		return
	fi
	pkh=$(pubkey_hash "$addr")
	now=$(wallet_outpoints)
	dest=$(dest_outpoints "$addr")
	# Outputs of the snapshot gone from the wallet's view: spent, unless the transaction that
	# made them is gone too (an unconfirmed transaction the node dropped).
	while IFS= read -r op; do
		[ -n "$op" ] || continue
		if tx_known "${op%%:*}"; then
			spent=$((spent + 1))
		fi
	done < <(comm -23 "$snapdir/$id.wallet" <(printf '%s\n' "$now" | sed '/^$/d'))
	# The payout's transaction: a new output of exactly the amount to the payee...
	while read -r op value; do
		if [ "$value" = "$want" ]; then
			found=${op%%:*}
			break
		fi
	done < <(comm -13 "$snapdir/$id.dest" <(printf '%s\n' "$dest" | sed '/^$/d'))
	# ... or a new wallet output (the change) of a transaction paying the payee.
	if [ -z "$found" ]; then
		while IFS= read -r tx; do
			if pays_address "$tx" "$pkh"; then
				found=$tx
				break
			fi
		done < <(comm -13 "$snapdir/$id.wallet" <(printf '%s\n' "$now" | sed '/^$/d') | cut -d: -f1 | sort -u)
	fi
	if [ -n "$found" ]; then
		ledger_put "$id" "done" "$found" "$addr" "$amount"
		rm -f "$snapdir/$id.wallet" "$snapdir/$id.dest"
		resolved="done"
		echo "resolved $id $addr $amount $found (already paid)"
	elif [ "$spent" -eq 0 ]; then
		ledger_put "$id"
		rm -f "$snapdir/$id.wallet" "$snapdir/$id.dest"
		resolved=unpaid
		echo "resolved $id: not broadcast, paying it now" >&2
	else
		ledger_put "$id" unresolved - "$addr" "$amount"
		resolved=unresolved
		echo "unresolved $id $addr $amount: $spent wallet output(s) were spent since the payout started but no transaction paying it was found; check and fix $ledger by hand (done with the txid, or delete the line to pay again)" >&2
	fi
}

# --- run -------------------------------------------------------------------------------
status=0
paid=0

if [ "$dry_run" = 1 ]; then
	for id in "${ids[@]}"; do
		case ${led_status[$id]:-} in
		done) ;;
		"") echo "would pay $id ${row_addr[$id]} ${row_amount[$id]}" ;;
		*) echo "would resolve ${led_status[$id]} $id ${row_addr[$id]} ${row_amount[$id]}" ;;
		esac
	done
	exit 0
fi

mkdir -p "$snapdir"

# First every pending payout of an earlier run, in the CSV or not.
for id in "${!led_status[@]}"; do
	[ "${led_status[$id]}" = pending ] || continue
	resolve "$id"
	[ "$resolved" != unresolved ] || status=3
done

for id in "${ids[@]}"; do
	case ${led_status[$id]:-} in
	done) continue ;;
	unresolved)
		echo "$prog: payout $id is unresolved in $ledger; not paying it" >&2
		status=3
		continue
		;;
	esac
	addr=${row_addr[$id]}
	amount=${row_amount[$id]}
	pubkey_hash "$addr" >/dev/null
	# 1. the snapshot and "pending"
	wallet_outpoints >"$snapdir/$id.wallet.tmp"
	dest_outpoints "$addr" >"$snapdir/$id.dest.tmp"
	sync "$snapdir/$id.wallet.tmp" "$snapdir/$id.dest.tmp"
	mv -f "$snapdir/$id.wallet.tmp" "$snapdir/$id.wallet"
	mv -f "$snapdir/$id.dest.tmp" "$snapdir/$id.dest"
	sync "$snapdir"
	ledger_put "$id" pending - "$addr" "$amount"
	# 2. the send
	send=("${wallet[@]}" --passphrase-file "$passfile" send --to "$addr" --amount "$amount" --json)
	[ -z "$fee_rate" ] || send+=(--fee-rate "$fee_rate")
	if out=$("${send[@]}" 2>"$errf"); then
		txid=$(sed -n 's/.*"txid"[[:space:]]*:[[:space:]]*"\([0-9a-f]*\)".*/\1/p' <<<"$out")
		if [[ $txid =~ ^[0-9a-f]{64}$ ]]; then
			# 3. "done"
			ledger_put "$id" "done" "$txid" "$addr" "$amount"
			rm -f "$snapdir/$id.wallet" "$snapdir/$id.dest"
			echo "paid $id $addr $amount $txid"
			paid=$((paid + 1))
			continue
		fi
	fi
	# The send failed or its answer is unreadable: it may still have been broadcast.
	reason=$(tr '\n' ' ' <"$errf" | sed -e 's/ *$//')
	resolve "$id"
	case $resolved in
	done) paid=$((paid + 1)) ;;
	unpaid) die 1 "payout $id $addr $amount failed, nothing was spent (next run retries): ${reason:-no txid in the answer of coin-wallet}" ;;
	*) exit 3 ;;
	esac
done

rmdir "$snapdir" 2>/dev/null || true
exit "$status"
