// Package events is the Proof of Conduct event stream of coin-faucetd: GET
// /api/agent/events as Server-Sent Events. It depends on the node's RPC (lib/rpcapi) and
// the transaction types, not on the faucet's internals.
//
// # Overview
//
// [Source] turns the chain follower's updates (lib/chainfollow: one follower in coin-faucetd,
// woken by the node's push stream, that reads each block once, finds reorganisations once
// and also feeds the payout engine) into events: [Source.Apply] takes the blocks
// disconnected, the blocks connected (their transaction ids) and the mempool's ids, fetches
// the transactions it has not seen (getrawtransaction, typed: rpcapi.Client.GetRawTransaction)
// and decodes the agent transactions (lib/types, consensus.Actor). An agent transaction
// gives one event when the mempool accepts it, with status "pending" and no height, and
// another when it is mined, with status "confirmed", the height and the block hash; one mined
// before the source saw it in the mempool gives only the confirmed event. Types:
// agent_registered, vouched, contract_created, contract_fulfilled, contract_refunded,
// reviewed; each names the agents it touches (actor, target, initiator, counterparty, subject). After each update the source
// reads getagentprofile of the agents touched and publishes score_changed (old_score,
// new_score, tier) when the score differs from the last one it published: the pending
// view's score, as /api/agent/profile shows it; "pending" while a mempool transaction
// touches the agent, else "confirmed" with the tip's height and hash.
//
// Retractions: when blocks leave the main chain, every event published for them
// (confirmed events and confirmed score changes) is undone, newest first, by an event
// {"type":"retracted","retracts":ID,"retracted_type","reason":"reorg"} that repeats the
// undone event's agents and txid. Transactions that return to the mempool then appear
// again as pending, and the new chain's blocks confirm them. A pending transaction that
// leaves the mempool without being mined (replaced, expired, invalidated) is retracted
// with reason "dropped". A pending event is not retracted when its confirmed event comes.
//
// [Store] is the event log in LevelDB (coin-faucetd: <data-dir>/events, beside and apart
// from the claims database): events by id (1, 2, … never reused) and the source's
// position (the last ReorgDepth processed blocks with their event ids, the pending
// transactions, each agent's last published score), written together in one synced batch
// per update. It keeps the newest Retention events (default 100,000); older ones are
// deleted as new ones come. So a restarted faucetd goes on where it stopped (its follower
// starts from [Source.Position]), reading the blocks mined meanwhile and retracting those
// undone meanwhile, and a subscriber resumes
// with Last-Event-ID across restarts without a gap as long as the events it missed are
// within the retention; otherwise the stream starts with an event "gap" {"from","to"}.
// On its very first start the source begins at the node's tip (history is in the
// profiles and the directory) and publishes the agent transactions of the mempool.
//
// [Hub] publishes: it appends to the store, then hands the events to the subscribers
// whose [Filter] matches, never waiting: each subscriber has a buffer (default 1,024
// events) and one that falls that far behind is dropped (its stream ends with a comment;
// the client reconnects with Last-Event-ID and loses nothing). [Hub.Subscribe] is the hook
// for other transports (an MCP resource subscription): a channel of the matching events
// and a cancel function.
//
// [Hub.Handler] serves the stream: ?address= (events touching that agent), ?types= (a
// comma list; a retraction passes when "retracted" or the type it undoes is listed),
// Last-Event-ID (header, or ?last_event_id= on a first connection) to resume; "id",
// "event" (the type) and "data" (the event as JSON) per event, a ": ping" comment every
// Heartbeat (15 s), a per-write deadline instead of the server's write timeout, an end after
// MaxAge (10 min, so a reader that never reads is dropped; the client resumes), and at most
// MaxSubscribers streams (503 beyond; coin-faucetd bounds them per client and in all before,
// lib/faucet's streams.go). A resumption is charged by the events it replays (replay.go:
// token buckets per client and for all, at most MaxReplay events back with a gap event
// "reason":"replay_limit" for older ones, 429 replay_rate_limited when the buckets cannot
// pay). Subscribers' queues hold pointers to the published events, shared by all.
//
// # Errors
//
// [ErrStoreInUse] (another process has the store open), [ErrSlow] (the reason a
// subscription ended). Request errors are 400 {"error":{"code","message"}} with the codes
// invalid_address, invalid_types and invalid_last_event_id; 503 too_many_subscribers; 429
// replay_rate_limited.
package events
