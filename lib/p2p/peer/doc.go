// Package peer runs one P2P connection: the version/verack handshake, a read loop in which
// every read has a deadline, a bounded send queue drained by a write loop, pings, a ban score
// and the bounded sets of inventory the peer is known to have.
//
// # Overview
//
// New wraps a net.Conn; Handshake exchanges version and verack within HandshakeTimeout and
// checks the remote network magic, genesis hash and protocol version; Run then reads frames
// until the connection ends and hands each message to a Handler on the read goroutine, so a
// peer's messages are processed in order and a slow peer only slows itself. A frame header
// must start within IdleTimeout (pings every PingInterval keep an honest link busy) and its
// payload must complete within PayloadTimeout; a ping left unanswered for IdleTimeout while
// no byte arrived ends the link too, so a connection through a black hole ends within
// IdleTimeout (30 s) rather than waiting out TCP's retransmission backoff.
//
// Sending: TrySend drops the message when the queue is full (announcements, requests);
// Send and SendRaw wait for room, which is how answers to a peer's own requests are paced to
// the speed it reads at. Writes have a deadline too; a peer that stops reading is dropped.
//
// Misbehaviour the owner detects adds to the ban score (AddBanScore); at the threshold (100)
// the owner is told (Config.OnMisbehaving: lib/p2p discourages the address) and the
// connection ends with ErrMisbehaving. Bytes that are not this protocol (another magic, a
// frame that does not parse) end the connection without any score: NotOurProtocol.
//
// # Errors
//
// Handshake returns ErrWrongNetwork, ErrWrongGenesis, ErrObsolete, ErrProtocol, ErrTimeout,
// the wire package's frame errors, or verify's error. Run returns why the connection ended.
// NotOurProtocol tells the errors of a client that does not speak this protocol or network.
package peer
