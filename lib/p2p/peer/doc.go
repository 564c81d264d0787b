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
// payload must complete within PayloadTimeout.
//
// Sending: TrySend drops the message when the queue is full (announcements, requests);
// Send and SendRaw wait for room, which is how answers to a peer's own requests are paced to
// the speed it reads at. Writes have a deadline too; a peer that stops reading is dropped.
//
// Misbehaviour adds to the ban score (AddBanScore); at the threshold (100) the connection
// ends with ErrBanned and the owner bans the IP.
//
// # Errors
//
// Handshake returns ErrWrongNetwork, ErrWrongGenesis, ErrObsolete, ErrProtocol, ErrTimeout,
// the wire package's frame errors, or verify's error. Run returns why the connection ended.
// Misbehaviour tells the errors that are the peer's fault.
package peer
