package rpcapi

// getutxosbyaddress answers every output of the address when called without a limit (the
// spec's one-parameter call), or one page when given one (paging is opt-in).
// Client.GetUtxosByAddress pages through all with pages of UtxoPageMax.
const (
	// UtxoPageDefault is kept for callers that name it: the page size the documentation
	// suggests for scripts that page.
	UtxoPageDefault = 1000
	// UtxoPageMax is the largest limit a paged call takes.
	UtxoPageMax = 5000
	// UtxoListMax is the most outputs an unpaged call answers; an address with more gets
	// an error of kind reason.ResultTooLarge that names getaddressbalance and the paged form,
	// never a short list. It follows from the response size a client accepts
	// (jsonrpc.DefaultMaxResponseBytes, 256 MiB): an output's JSON object is at most
	// UtxoJSONMaxBytes, so a full answer stays under a fifth of that limit (51.2 MB of
	// 256 MiB), and the node builds it in a few seconds.
	UtxoListMax = 100_000
	// UtxoJSONMaxBytes bounds one getutxosbyaddress element in JSON (txid, cluster_id and
	// pubkey_hash of 64 hex digits, five 20-digit integers, the field names and two
	// booleans: 418 bytes at most; TestUtxoListBound checks it).
	UtxoJSONMaxBytes = 512
)

// Param types: how coin-cli converts an argument and how the server decodes it.
const (
	TypeString  = "string"
	TypeHash    = "hash"    // 64 hex characters
	TypeHex     = "hex"     // hex-encoded bincode
	TypeAddress = "address" // bech32m address
	TypeUint    = "integer" // non-negative integer
	TypeBool    = "boolean"
)

// Param is one positional parameter.
type Param struct {
	Name     string
	Type     string
	Optional bool
	Help     string
}

// Method is one RPC method.
type Method struct {
	Name     string
	Category string
	Summary  string
	Params   []Param
	Result   string
	// Regtest marks methods only regtest nodes serve.
	Regtest bool
}

// Methods lists every method of the node, the spec's fifteen and protocol §11's extensions.
var Methods = []Method{
	{Name: "getblockcount", Category: "chain", Summary: "Height of the chain tip.", Result: "integer: the tip height"},
	{Name: "getblockhash", Category: "chain", Summary: "Hash of the main-chain block at a height.",
		Params: []Param{{Name: "height", Type: TypeUint, Help: "block height"}}, Result: "string: block hash (hex)"},
	{Name: "getblock", Category: "chain", Summary: "A block with its transaction ids.",
		Params: []Param{{Name: "hash", Type: TypeHash, Help: "block hash"}},
		Result: "object: hash, height, version, prev_hash, merkle_root, timestamp, difficulty_target, nonce, tx_count, tx"},
	{Name: "getblockheader", Category: "chain", Summary: "A block header.",
		Params: []Param{{Name: "hash", Type: TypeHash, Help: "block hash"}},
		Result: "object: hash, version, prev_hash, merkle_root, timestamp, difficulty_target, nonce"},
	{Name: "gettransaction", Category: "chain", Summary: "A confirmed or mempool transaction.",
		Params: []Param{{Name: "txid", Type: TypeHash, Help: "transaction id"}},
		Result: "object: txid, version, vin_count, vout_count, lock_time (and kind, size, fee, block_hash, block_height, confirmations, in_mempool)"},
	{Name: "getrawtransaction", Category: "chain", Summary: "A transaction's hex bincode.",
		Params: []Param{{Name: "txid", Type: TypeHash, Help: "transaction id"}}, Result: "string: hex bincode"},
	{Name: "sendrawtransaction", Category: "mempool", Summary: "Validate a transaction, add it to the mempool and relay it.",
		Params: []Param{{Name: "hex_data", Type: TypeHex, Help: "hex-encoded bincode transaction"}}, Result: "string: txid"},
	{Name: "getmempoolinfo", Category: "mempool", Summary: "Mempool size, bytes and total fee.", Result: "object: size, bytes, total_fee"},
	{Name: "getrawmempool", Category: "mempool", Summary: "Ids of the mempool's transactions, parents before children.",
		Result: "array of strings: txids"},
	{Name: "getpeerinfo", Category: "network", Summary: "Connected peers.",
		Result: "object: connected, peers[{id, addr, addrlocal, inbound, connection_type, pingtime, minping, synced_headers, synced_blocks, bytessent, bytesrecv, conntime, version, subver, startingheight, banscore}]"},
	{Name: "getnetworkinfo", Category: "network", Summary: "The P2P layer: versions, local addresses, connection counts, activity and relay fee.",
		Result: "object: version, subversion, protocolversion, localaddresses[{address, port}], connections, connections_in, connections_out, networkactive, relayfee (COIN per kB)"},
	{Name: "getnettotals", Category: "network", Summary: "Bytes received and sent over all P2P connections since the start.",
		Result: "object: totalbytesrecv, totalbytessent, timemillis"},
	{Name: "disconnectnode", Category: "network", Summary: "Disconnect a peer, by address or (with an empty address) by id.",
		Params: []Param{{Name: "address", Type: TypeString, Optional: true, Help: "the peer's address as getpeerinfo shows it (host:port); empty to use nodeid"},
			{Name: "nodeid", Type: TypeUint, Optional: true, Help: "the peer's id from getpeerinfo (with an empty address)"}},
		Result: "null"},
	{Name: "setban", Category: "network", Summary: "Ban a subnet (an address or a CIDR range) from connecting, or lift a ban; a banned subnet's peers are disconnected at once. Bans persist in <data-dir>/banlist.json.",
		Params: []Param{{Name: "subnet", Type: TypeString, Help: "an address (1.2.3.4, ::1) or a CIDR range (1.2.3.0/24)"},
			{Name: "command", Type: TypeString, Help: "add or remove"},
			{Name: "bantime", Type: TypeUint, Optional: true, Help: "seconds the ban lasts (default 86400, 24 h), or with absolute the unix time it ends"},
			{Name: "absolute", Type: TypeBool, Optional: true, Help: "bantime is a unix time (default false)"}},
		Result: "null"},
	{Name: "listbanned", Category: "network", Summary: "The manual bans in force.",
		Result: "array of objects: address, ban_created, banned_until, ban_duration, time_remaining"},
	{Name: "clearbanned", Category: "network", Summary: "Lift every manual ban (discouraged addresses stay so until their 24 h end).", Result: "null"},
	{Name: "setnetworkactive", Category: "network", Summary: "Turn all P2P activity off (every connection closed, none made or accepted) or on again.",
		Params: []Param{{Name: "state", Type: TypeBool, Help: "true to enable, false to disable"}}, Result: "boolean: the new state"},
	{Name: "ping", Category: "network", Summary: "Ping every peer now; the round trips show in getpeerinfo's pingtime.", Result: "null"},
	{Name: "getinfo", Category: "node", Summary: "Node summary with supply and decay pool in COIN.",
		Result: "object: blocks, bestblockhash, connections, circulating_supply, decay_pool"},
	{Name: "getblockchaininfo", Category: "chain", Summary: "Chain state summary in subunits.",
		Result: "object: height, best_block_hash, circulating_supply, decay_pool_balance, initial_block_download, utxo_count, mempool_size, peer_count"},
	{Name: "getsyncstatus", Category: "network", Summary: "Whether the node is syncing from peers.",
		Result: "object: syncing, current_height, peer_count, best_block_hash, target_height, progress (0..1)"},
	{Name: "addnode", Category: "network", Summary: "Keep a peer connected (add), stop keeping it (remove), or connect to it once (onetry).",
		Params: []Param{{Name: "node", Type: TypeString, Help: "peer address host:port (a host alone takes the network's P2P port)"},
			{Name: "command", Type: TypeString, Help: "add, remove or onetry"}},
		Result: "null"},
	{Name: "getaddednodeinfo", Category: "network", Summary: "The added nodes (addnode, --addnode) and whether each is connected.",
		Params: []Param{{Name: "node", Type: TypeString, Optional: true, Help: "only this added node (default all)"}},
		Result: "array of objects: addednode, connected, addresses[{address, connected (outbound or inbound)}]"},
	{Name: "getnodeaddresses", Category: "network", Summary: "A random sample of the peer addresses the node knows.",
		Params: []Param{{Name: "count", Type: TypeUint, Optional: true, Help: "how many (default 1; 0: all)"}},
		Result: "array of objects: time, services, address, port, network"},
	{Name: "getblocktemplate", Category: "mining", Summary: "A block template paying the mining address.",
		Params: []Param{{Name: "mining_address", Type: TypeAddress, Help: "address the coinbase pays"}},
		Result: "object: version, prev_hash, merkle_root, timestamp, difficulty_target, nonce, height, transactions[{txid, data, fee}]"},
	{Name: "submitblock", Category: "mining", Summary: "Submit a solved block.",
		Params: []Param{{Name: "hex_data", Type: TypeHex, Help: "hex-encoded bincode block"}}, Result: "string: ok"},
	{Name: "generatetoaddress", Category: "mining", Summary: "Mine blocks immediately to an address (regtest only).", Regtest: true,
		Params: []Param{{Name: "nblocks", Type: TypeUint, Help: "how many blocks"}, {Name: "address", Type: TypeAddress, Help: "address the coinbases pay"}},
		Result: "array of strings: the new block hashes"},
	{Name: "getutxosbyaddress", Category: "chain", Summary: "Every unspent output of an address, in outpoint order (at most 100000: more is an error naming getaddressbalance and the paged form); with a limit, one page of them.",
		Params: []Param{{Name: "address", Type: TypeAddress, Help: "address"},
			{Name: "include_mempool", Type: TypeBool, Optional: true, Help: "apply mempool spends and add mempool outputs (default false)"},
			{Name: "after", Type: TypeString, Optional: true, Help: "TXID:INDEX of the last output of the previous page; empty or omitted: from the start"},
			{Name: "limit", Type: TypeUint, Optional: true, Help: "page: at most this many outputs (1 to 5000); a shorter page is the last. Omitted: every output (after the cursor)"}},
		Result: "array of objects: txid, index, value, block_height, is_coinbase, cluster_id, pubkey_hash, effective_value, locked, confirmations"},
	{Name: "getaddressbalance", Category: "chain", Summary: "Balances of an address, summed by the node without listing its outputs.",
		Params: []Param{{Name: "address", Type: TypeAddress, Help: "address"},
			{Name: "include_mempool", Type: TypeBool, Optional: true, Help: "apply mempool spends and add mempool outputs (default false)"}},
		Result: "object: address, balance (Σ nominal value of the outputs, subunits), spendable (Σ effective value at the next block of the mature, unlocked ones), locked, immature (nominal), utxo_count"},
	{Name: "getclusterbalance", Category: "chain", Summary: "Total of the unspent outputs of a decay cluster.",
		Params: []Param{{Name: "cluster_id", Type: TypeHash, Help: "cluster id (hex)"}}, Result: "integer: subunits"},
	{Name: "getclusterinfo", Category: "chain", Summary: "A decay cluster: balance, concentration and decay rate (protocol §8).",
		Params: []Param{{Name: "address_or_cluster_id", Type: TypeString, Help: "an address, or a cluster id (hex)"}},
		Result: "object: cluster_id, balance, addresses, concentration_ppb, rate_per_block, yearly_decay_percent, circulating_supply"},
	{Name: "gettxoutsetinfo", Category: "chain", Summary: "Statistics and a hash of the whole UTXO set.",
		Result: "object: height, best_block_hash, utxo_count, total_amount, hash"},
	{Name: "validateaddress", Category: "util", Summary: "Check an address for this network.",
		Params: []Param{{Name: "address", Type: TypeString, Help: "address to check"}},
		Result: "object: isvalid, address, pubkey_hash, cluster_id, error"},
	{Name: "getagentprofile", Category: "conduct", Summary: "An agent's conduct profile, as the pending view (chain and mempool) has it.",
		Params: []Param{{Name: "address", Type: TypeAddress, Help: "agent address"}},
		Result: "object: address, conduct_score, tier, contracts_completed, contracts_failed, vouches_received, vouches_given, reviews_received, average_review_score, registered_at, registered_height, stake_txid, confirmed"},
	{Name: "listagents", Category: "conduct", Summary: "Agents by conduct score (highest first, then address), pending view.",
		Params: []Param{{Name: "offset", Type: TypeUint, Optional: true, Help: "agents to skip (default 0)"},
			{Name: "limit", Type: TypeUint, Optional: true, Help: "agents to list (default 20, at most 100)"}},
		Result: "object: agents[{address, conduct_score, tier, contracts_completed}], total, offset, limit"},
	{Name: "getcontract", Category: "conduct", Summary: "A contract by id (its ContractCreate txid), pending view.",
		Params: []Param{{Name: "contract_id", Type: TypeHash, Help: "contract id (hex)"}},
		Result: "object: contract_id, initiator, counterparty, value, value_coin, created_height, expires_at, status, closed_by, reviewed_by_initiator, reviewed_by_counterparty, confirmed"},
	{Name: "getconductinfo", Category: "conduct", Summary: "Agent and contract statistics and a hash of the whole conduct state (confirmed).",
		Result: "object: height, best_block_hash, agents, open_contracts, hash"},
	// Bitcoin Core's staples, with Core's names and result fields (docs/protocol.md §11).
	{Name: "getbestblockhash", Category: "chain", Summary: "Hash of the main chain's tip.", Result: "string: block hash (hex)"},
	{Name: "getdifficulty", Category: "mining", Summary: "Difficulty of the tip: how many times harder its target is than the network's easiest.",
		Result: "number"},
	{Name: "getmininginfo", Category: "mining", Summary: "Mining summary: tip, difficulty, estimated network hash rate, mempool size.",
		Result: "object: blocks, bits, difficulty, target, networkhashps, pooledtx, chain, warnings"},
	{Name: "getnetworkhashps", Category: "mining", Summary: "Estimated network hashes per second from the work and time of recent blocks.",
		Params: []Param{{Name: "nblocks", Type: TypeUint, Optional: true, Help: "blocks to average over (default 120; 0: since the genesis block)"},
			{Name: "height", Type: TypeUint, Optional: true, Help: "estimate at this height (default: the tip)"}},
		Result: "number: hashes per second"},
	{Name: "getchaintips", Category: "chain", Summary: "Every branch tip of the block index: the active chain's and the forks'.",
		Result: "array of objects: height, hash, branchlen, status (active, valid-fork, valid-headers, headers-only, invalid)"},
	{Name: "getblockstats", Category: "chain", Summary: "Statistics of one block: fees, fee rates, sizes, inputs and outputs (fees in subunits, nominal).",
		Params: []Param{{Name: "hash_or_height", Type: TypeString, Help: "block hash, or main-chain height"}},
		Result: "object: avgfee, avgfeerate, avgtxsize, blockhash, feerate_percentiles (10th, 25th, 50th, 75th, 90th), height, ins, maxfee, maxfeerate, maxtxsize, medianfee, mediantime, mediantxsize, minfee, minfeerate, mintxsize, outs, subsidy, time, total_out, total_size, totalfee, txs, utxo_increase"},
	{Name: "uptime", Category: "node", Summary: "Seconds since the node started.", Result: "integer: seconds"},
	{Name: "getmempoolentry", Category: "mempool", Summary: "A mempool transaction: size, fees, time, in-pool ancestors and descendants.",
		Params: []Param{{Name: "txid", Type: TypeHash, Help: "transaction id"}},
		Result: "object: txid, vsize, size, fee (subunits), fees{base, modified, ancestor, descendant} (COIN), time, height, ancestorcount, ancestorsize, descendantcount, descendantsize, depends, spentby"},
	{Name: "testmempoolaccept", Category: "mempool", Summary: "Whether the mempool would accept transactions, without adding or relaying them.",
		Params: []Param{{Name: "rawtxs", Type: TypeString, Help: `hex of one transaction, or a JSON array of up to 25 ('["HEX",...]'), checked one by one against the pool`}},
		Result: "array of objects: txid, allowed, vsize, fees{base} (COIN), reject-reason (the reason of docs/rpc-errors.md), reject-details"},
	{Name: "decoderawtransaction", Category: "util", Summary: "Decode a transaction's hex without looking it up.",
		Params: []Param{{Name: "hex_data", Type: TypeHex, Help: "hex-encoded bincode transaction"}},
		Result: "object: txid, hash, version, size, vsize, locktime, kind, payload, vin[{txid, vout, pubkey, signature}], vout[{value (COIN), value_subunits, n, address, pubkey_hash}]"},
	{Name: "estimatesmartfee", Category: "mempool", Summary: "A fee rate that should confirm within conf_target blocks, from the fee rates of recent blocks and of the mempool.",
		Params: []Param{{Name: "conf_target", Type: TypeUint, Help: "blocks to confirm within (1 to 1008)"},
			{Name: "estimate_mode", Type: TypeString, Optional: true, Help: "accepted for Bitcoin Core's callers (unset, economical, conservative); the estimate is the same"}},
		Result: "object: feerate (COIN per 1000 bytes), feerate_per_byte (subunits), blocks, errors"},
	{Name: "waitfornewblock", Category: "chain", Summary: "Wait for the tip to change, then return it (or the tip at the timeout).",
		Params: []Param{{Name: "timeout", Type: TypeUint, Optional: true, Help: "milliseconds to wait at most (default and 0: until the node's 30-second call limit, less a second)"}},
		Result: "object: hash, height"},
	{Name: "waitforblockheight", Category: "chain", Summary: "Wait for the main chain to reach a height, then return the tip (or the tip at the timeout).",
		Params: []Param{{Name: "height", Type: TypeUint, Help: "height to wait for"},
			{Name: "timeout", Type: TypeUint, Optional: true, Help: "milliseconds to wait at most (default and 0: until the node's 30-second call limit, less a second)"}},
		Result: "object: hash, height"},
	{Name: "help", Category: "util", Summary: "List methods, or describe one.",
		Params: []Param{{Name: "method", Type: TypeString, Optional: true, Help: "method name"}}, Result: "string"},
	{Name: "stop", Category: "node", Summary: "Shut the node down cleanly.", Result: "string"},
}

// Lookup finds a method by name.
func Lookup(name string) (Method, bool) {
	for _, m := range Methods {
		if m.Name == name {
			return m, true
		}
	}
	return Method{}, false
}

// RequiredParams counts the parameters that are not optional.
func (m Method) RequiredParams() int {
	n := 0
	for _, p := range m.Params {
		if !p.Optional {
			n++
		}
	}
	return n
}
