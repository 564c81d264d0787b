package p2p

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/netip"
	"sort"
	"sync"
	"time"

	"github.com/cointoolkit/coin/lib/p2p/addrman"
	"github.com/cointoolkit/coin/lib/p2p/peer"
	"github.com/cointoolkit/coin/lib/reason"
)

// The connection manager, in the manner of btcd's connmgr: the one owner of the connection
// table and of the rules about who may be connected. Every open connection, handshaking or
// not, has an entry here; the limits (MaxOutbound, MaxInbound, MaxInboundPerIP), the ban
// manager's verdicts, inbound eviction, handshake-stall accounting, self-connection and
// duplicate detection, network activity (setnetworkactive) and the byte totals all read and
// change that table under its own mutex, apart from the sync's state (Server.mu). The
// server's conn.go runs the sockets (accept, dial, handshake, message dispatch) and asks
// this manager at each step.

// Errors of the connection manager.
var (
	// ErrNodeNotConnected: disconnectnode named no connected peer.
	ErrNodeNotConnected error = &netError{reason.NodeNotConnected, "node not found in connected nodes"}
	// errNetworkInactive ends connections when setnetworkactive turns the network off.
	errNetworkInactive = errors.New("network activity disabled")
	// errBannedNow ends a peer's connection when setban bans its address.
	errBannedNow = errors.New("banned by setban")
	// errDisconnectRequested ends a peer's connection at disconnectnode.
	errDisconnectRequested = errors.New("disconnectnode")
)

// Connection types, as Core's getpeerinfo names them.
const (
	ConnInbound   = "inbound"
	ConnOutbound  = "outbound-full-relay"
	ConnManual    = "manual"     // --connect, --addnode and addnode peers
	ConnAddrFetch = "addr-fetch" // --seednode peers: asked for addresses, then left
)

// connEntry is one open connection.
type connEntry struct {
	conn     net.Conn
	p        *peer.Peer
	inbound  bool
	ip       netip.Addr
	dialAddr string   // outbound: the address dialled
	kind     connKind // outbound: why it was made (outbound.go)
	// established: the handshake completed and the peer is registered (nonce known).
	established bool
	nonce       uint64
	// discouraged: an inbound connection from a discouraged address (evicted first).
	discouraged bool
	evicted     bool // chosen to make room already
	// For eviction: when the peer last sent a block or a transaction new to us.
	lastBlock, lastTx time.Time
}

func (e *connEntry) connType() string {
	if e.inbound {
		return ConnInbound
	}
	return e.kind.String()
}

// connManager owns the connection table. Its mutex is never held while taking Server.mu.
type connManager struct {
	cfg  *Config
	bans *BanManager
	log  *slog.Logger
	wake chan struct{} // the dialler looks for work when signalled

	mu        sync.Mutex
	conns     map[net.Conn]*connEntry
	byPeer    map[*peer.Peer]*connEntry
	nonces    map[nonceKey]*connEntry // established connections by the remote node and direction
	inbound   int                     // connected and handshaking
	inboundIP map[netip.Addr]int
	stalls    map[netip.Addr]*stallRecord
	dialing   map[string]connKind // outbound addresses dialling or connected, with their kind
	outLocal  map[string]string   // local address of an outbound connection → the address dialled
	self      map[string]bool
	inactive  bool // setnetworkactive false
	stopped   bool // the server is shutting down: no new connections
	// Bytes of the connections that have ended (getnettotals adds the open ones).
	closedSent, closedRecv uint64
}

func newConnManager(cfg *Config, bans *BanManager, log *slog.Logger) *connManager {
	return &connManager{cfg: cfg, bans: bans, log: log, wake: make(chan struct{}, 1),
		conns: make(map[net.Conn]*connEntry), byPeer: make(map[*peer.Peer]*connEntry), nonces: make(map[nonceKey]*connEntry),
		inboundIP: make(map[netip.Addr]int), stalls: make(map[netip.Addr]*stallRecord), dialing: make(map[string]connKind),
		outLocal: make(map[string]string), self: make(map[string]bool)}
}

// signal wakes the dialler.
func (cm *connManager) signal() {
	select {
	case cm.wake <- struct{}{}:
	default:
	}
}

// admitInbound decides about a new inbound connection from ip: refused (why says so) while
// the network is inactive, when ip is banned, when ip has MaxInboundPerIP connections
// already, or when every inbound slot is taken and no peer can be evicted (a discouraged
// address never evicts anyone: it takes only a free slot). Else it is counted, with the
// peer to evict to make room, if any, and whether the address is discouraged.
func (cm *connManager) admitInbound(ip netip.Addr) (victim *peer.Peer, discouraged bool, why string) {
	if ban, ok := cm.bans.Banned(ip); ok {
		return nil, false, "banned (until " + ban.Until.UTC().Format(time.RFC3339) + ")"
	}
	discouraged = cm.bans.Discouraged(ip)
	cm.mu.Lock()
	defer cm.mu.Unlock()
	if cm.inactive {
		return nil, false, "network activity disabled"
	}
	if cm.cfg.MaxInboundPerIP > 0 && cm.inboundIP[ip] >= cm.cfg.MaxInboundPerIP {
		return nil, false, "too many connections from this address"
	}
	if cm.inbound >= cm.cfg.MaxInbound {
		if discouraged {
			return nil, false, "inbound slots full and the address is discouraged"
		}
		e := cm.evictionVictimLocked()
		if e == nil {
			return nil, false, "inbound slots full"
		}
		e.evicted = true
		victim = e.p
	}
	cm.inbound++
	cm.inboundIP[ip]++
	return victim, discouraged, ""
}

// releaseInbound undoes admitInbound when the connection has ended.
func (cm *connManager) releaseInbound(ip netip.Addr) {
	cm.mu.Lock()
	cm.inbound--
	if cm.inboundIP[ip]--; cm.inboundIP[ip] <= 0 {
		delete(cm.inboundIP, ip)
	}
	cm.mu.Unlock()
}

// Inbound eviction, in the manner of Bitcoin Core's AttemptToEvictConnection, simplified:
// when every inbound slot is taken, a newcomer may replace the least useful inbound peer.
// A connection from a discouraged address goes first (the youngest of them). Otherwise
// protected are the evictProtectBlocks peers that most recently sent a block new to us, the
// evictProtectTxs that most recently sent a transaction the mempool accepted, and the
// evictProtectOldest longest-connected of the rest (so a node with few inbound peers evicts
// none). Of the others, the victim is the youngest connection of the network group (IPv4
// /16, IPv6 /32) holding the most of them: an attacker with many addresses in one range
// evicts its own connections first.
const (
	evictProtectBlocks = 4
	evictProtectTxs    = 4
	evictProtectOldest = 8
)

// errEvicted ends an inbound connection evicted to make room for another.
var errEvicted = errors.New("evicted to make room for a new inbound connection")

// evictionVictimLocked picks the inbound connection to evict, or nil (cm.mu held).
func (cm *connManager) evictionVictimLocked() *connEntry {
	var cands []*connEntry
	for _, e := range cm.byPeer {
		if e.inbound && e.established && !e.evicted {
			cands = append(cands, e)
		}
	}
	// Oldest first (peer ids grow with connection order).
	sort.Slice(cands, func(i, j int) bool { return cands[i].p.ID() < cands[j].p.ID() })
	for i := len(cands) - 1; i >= 0; i-- {
		if cands[i].discouraged {
			return cands[i]
		}
	}
	protect := func(n int, recent func(*connEntry) time.Time) {
		sort.SliceStable(cands, func(i, j int) bool { return recent(cands[i]).After(recent(cands[j])) })
		k := 0
		for k < n && k < len(cands) && !recent(cands[k]).IsZero() {
			k++
		}
		cands = cands[k:]
	}
	protect(evictProtectBlocks, func(e *connEntry) time.Time { return e.lastBlock })
	protect(evictProtectTxs, func(e *connEntry) time.Time { return e.lastTx })
	sort.Slice(cands, func(i, j int) bool { return cands[i].p.ID() < cands[j].p.ID() })
	if len(cands) <= evictProtectOldest {
		return nil
	}
	cands = cands[evictProtectOldest:]
	groups := map[string][]*connEntry{}
	for _, e := range cands {
		g := addrman.Group(e.ip.String()) // IPv4 /16, IPv6 /32, as for outbound peers
		groups[g] = append(groups[g], e)
	}
	var best []*connEntry
	for _, g := range groups {
		// The group with the most connections; on a tie the one with the youngest.
		if len(g) > len(best) || (len(g) == len(best) && g[len(g)-1].p.ID() > best[len(best)-1].p.ID()) {
			best = g
		}
	}
	return best[len(best)-1]
}

// skipDial reports whether addr must not be dialled now: being dialled already, our own
// address, banned or discouraged. A --connect peer is no exception: to keep dialling a peer
// whatever it sends, whitelist it (--whitelist).
func (cm *connManager) skipDial(addr string) bool {
	if ap, err := netip.ParseAddrPort(addr); err == nil {
		if _, banned := cm.bans.Banned(ap.Addr()); banned {
			return true
		}
		if cm.bans.Discouraged(ap.Addr()) {
			return true
		}
	}
	cm.mu.Lock()
	defer cm.mu.Unlock()
	_, dialing := cm.dialing[addr]
	return dialing || cm.self[addr]
}

// outboundSlots counts the outbound connections (dialling or up) of each kind and the
// network groups of the full-relay ones; ok is false while network activity is off (no
// dialling then).
func (cm *connManager) outboundSlots() (counts map[connKind]int, groups map[string]bool, ok bool) {
	cm.mu.Lock()
	defer cm.mu.Unlock()
	counts, groups = make(map[connKind]int), make(map[string]bool)
	for a, k := range cm.dialing {
		counts[k]++
		if k == connFull {
			groups[addrman.Group(a)] = true
		}
	}
	return counts, groups, !cm.inactive && !cm.stopped
}

// slotsOf is how many outbound connections of kind k may be up at once: MaxOutbound
// full-relay ones and as many --connect ones, maxAddedConns to added nodes; seed and
// onetry connections take no slot (their lists are bounded).
func (cm *connManager) slotsOf(k connKind) int {
	switch k {
	case connFull, connManual:
		return cm.cfg.MaxOutbound
	case connAddnode:
		return maxAddedConns
	}
	return math.MaxInt
}

// reserveOutbound takes an outbound slot of kind k for addr, unless addr is being dialled
// or connected already, the kind's slots are taken or network activity is off.
func (cm *connManager) reserveOutbound(addr string, k connKind) bool {
	cm.mu.Lock()
	defer cm.mu.Unlock()
	if _, busy := cm.dialing[addr]; busy || cm.inactive || cm.stopped {
		return false
	}
	n := 0
	for _, o := range cm.dialing {
		if o == k {
			n++
		}
	}
	if n >= cm.slotsOf(k) {
		return false
	}
	cm.dialing[addr] = k
	return true
}

// releaseOutbound frees addr's slot when its connection has ended (or never began).
func (cm *connManager) releaseOutbound(addr string) {
	cm.mu.Lock()
	delete(cm.dialing, addr)
	cm.mu.Unlock()
	cm.signal()
}

// track enters a new connection in the table; false when the network went inactive
// meanwhile (the caller closes it).
func (cm *connManager) track(conn net.Conn, p *peer.Peer, inbound, discouraged bool, dialAddr string, kind connKind) (*connEntry, bool) {
	cm.mu.Lock()
	defer cm.mu.Unlock()
	if cm.inactive || cm.stopped {
		return nil, false
	}
	e := &connEntry{conn: conn, p: p, inbound: inbound, ip: p.IP(), dialAddr: dialAddr, kind: kind, discouraged: discouraged}
	cm.conns[conn] = e
	cm.byPeer[p] = e
	if !inbound {
		cm.outLocal[conn.LocalAddr().String()] = dialAddr
	}
	return e, true
}

// untrack removes an ended connection, adding its bytes to the totals.
func (cm *connManager) untrack(e *connEntry) {
	st := e.p.Stats()
	cm.mu.Lock()
	delete(cm.conns, e.conn)
	delete(cm.byPeer, e.p)
	if k := (nonceKey{e.nonce, e.inbound}); e.established && cm.nonces[k] == e {
		delete(cm.nonces, k)
	}
	if !e.inbound {
		delete(cm.outLocal, e.conn.LocalAddr().String())
	}
	cm.closedSent += st.BytesSent
	cm.closedRecv += st.BytesRecv
	cm.mu.Unlock()
}

// nonceKey names an established connection by the remote node's nonce and the direction.
// Two nodes may be connected once each way, as in Bitcoin Core (whose duplicate check is
// by the address dialled, and whose outbound group diversity counts only outbound peers):
// the node everyone dials first, a seed, can still dial its own outbound peers among
// them, and when two nodes dial each other at once both connections stay, one each way.
// A second connection in the same direction (the node dialled under another address,
// or it dialled us twice) is a duplicate.
type nonceKey struct {
	nonce   uint64
	inbound bool
}

// checkNonce refuses a remote nonce that is ours (a self-connection) or, in the same
// direction, a connected peer's (a duplicate connection).
func (cm *connManager) checkNonce(ours, theirs uint64, inbound bool) error {
	if theirs == ours {
		return errSelf
	}
	cm.mu.Lock()
	defer cm.mu.Unlock()
	if other, ok := cm.nonces[nonceKey{theirs, inbound}]; ok {
		return fmt.Errorf("%w (as %s)", errDuplicate, other.p.Addr())
	}
	return nil
}

// establish registers a completed handshake under the remote nonce and direction (refusing
// a duplicate that raced it) and applies a ban or discouragement that began during the
// handshake.
func (cm *connManager) establish(e *connEntry, nonce uint64) error {
	if _, banned := cm.bans.Banned(e.ip); banned {
		return errBannedNow
	}
	cm.mu.Lock()
	defer cm.mu.Unlock()
	k := nonceKey{nonce, e.inbound}
	if other, ok := cm.nonces[k]; ok {
		return fmt.Errorf("%w (as %s)", errDuplicate, other.p.Addr())
	}
	e.established, e.nonce = true, nonce
	cm.nonces[k] = e
	return nil
}

// noteSelf remembers that dialling addr reaches ourselves; localAddr is the inbound end's
// remote address, which is the local address of the outbound connection that made it.
func (cm *connManager) noteSelf(dialAddr, localAddr string) string {
	cm.mu.Lock()
	defer cm.mu.Unlock()
	if dialAddr == "" {
		dialAddr = cm.outLocal[localAddr]
	}
	if dialAddr != "" {
		cm.self[dialAddr] = true
	}
	return dialAddr
}

// noteUseful records that p sent a block or a transaction new to us (for eviction).
func (cm *connManager) noteUseful(p *peer.Peer, block bool) {
	cm.mu.Lock()
	if e := cm.byPeer[p]; e != nil {
		if block {
			e.lastBlock = time.Now()
		} else {
			e.lastTx = time.Now()
		}
	}
	cm.mu.Unlock()
}

// entry is p's connection entry (nil once it ended).
func (cm *connManager) entry(p *peer.Peer) *connEntry {
	cm.mu.Lock()
	defer cm.mu.Unlock()
	return cm.byPeer[p]
}

// connInfo is an established connection as the RPC shows it.
type connInfo struct {
	p        *peer.Peer
	connType string
}

// established lists the established connections, oldest first.
func (cm *connManager) established() []connInfo {
	cm.mu.Lock()
	out := make([]connInfo, 0, len(cm.nonces))
	for _, e := range cm.nonces {
		out = append(out, connInfo{p: e.p, connType: e.connType()})
	}
	cm.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].p.ID() < out[j].p.ID() })
	return out
}

// counts is the number of established inbound and outbound connections.
func (cm *connManager) counts() (in, out int) {
	cm.mu.Lock()
	defer cm.mu.Unlock()
	for _, e := range cm.nonces {
		if e.inbound {
			in++
		} else {
			out++
		}
	}
	return in, out
}

// totals is the bytes received and sent over every connection since start.
func (cm *connManager) totals() (recv, sent uint64) {
	cm.mu.Lock()
	recv, sent = cm.closedRecv, cm.closedSent
	list := make([]*peer.Peer, 0, len(cm.byPeer))
	for p := range cm.byPeer {
		list = append(list, p)
	}
	cm.mu.Unlock()
	for _, p := range list {
		st := p.Stats()
		recv += st.BytesRecv
		sent += st.BytesSent
	}
	return recv, sent
}

// disconnectWhere ends every connection (handshaking or not) for which match holds, with
// reason; it returns how many.
func (cm *connManager) disconnectWhere(match func(*connEntry) bool, reason error) int {
	cm.mu.Lock()
	var list []*peer.Peer
	for _, e := range cm.byPeer {
		if match(e) {
			list = append(list, e.p)
		}
	}
	cm.mu.Unlock()
	for _, p := range list {
		p.Disconnect(reason)
	}
	return len(list)
}

// disconnectSubnet ends the connections from and to subnet (setban add).
func (cm *connManager) disconnectSubnet(subnet netip.Prefix) int {
	return cm.disconnectWhere(func(e *connEntry) bool { return subnet.Contains(e.ip.Unmap()) }, errBannedNow)
}

// disconnectNode ends the established connection with address addr ("host:port", the
// peer's addr in getpeerinfo, or the address dialled) or, when addr is empty, with id.
func (cm *connManager) disconnectNode(addr string, id uint64) error {
	n := cm.disconnectWhere(func(e *connEntry) bool {
		if !e.established {
			return false
		}
		if addr == "" {
			return e.p.ID() == id
		}
		return e.p.Addr() == addr || (e.dialAddr != "" && e.dialAddr == addr)
	}, errDisconnectRequested)
	if n == 0 {
		return ErrNodeNotConnected
	}
	return nil
}

// setActive turns network activity on or off (setnetworkactive); off ends every
// connection and stops accepting and dialling until it is turned on again.
func (cm *connManager) setActive(on bool) {
	cm.mu.Lock()
	changed := cm.inactive == on
	cm.inactive = !on
	cm.mu.Unlock()
	if !changed {
		return
	}
	cm.log.Info("network activity "+map[bool]string{true: "enabled", false: "disabled"}[on], "by", "setnetworkactive")
	if !on {
		cm.disconnectWhere(func(*connEntry) bool { return true }, errNetworkInactive)
		return
	}
	cm.signal()
}

// active reports whether network activity is on.
func (cm *connManager) active() bool {
	cm.mu.Lock()
	defer cm.mu.Unlock()
	return !cm.inactive
}

// closeAll closes every connection at shutdown.
func (cm *connManager) closeAll(reason error) {
	cm.mu.Lock()
	cm.stopped = true
	list := make([]*connEntry, 0, len(cm.conns))
	for _, e := range cm.conns {
		list = append(list, e)
	}
	cm.mu.Unlock()
	for _, e := range list {
		e.p.Disconnect(reason)
	}
}

// stallRecord is an IP's handshake stalls: the ban score they add up to and the last one.
type stallRecord struct {
	score int
	last  time.Time
}

// maxStallRecords bounds the IPs whose stalls are remembered.
const maxStallRecords = 10_000

// addStall charges ip for letting a handshake time out and returns the score its recent
// stalls add up to.
func (cm *connManager) addStall(ip netip.Addr) int {
	now := time.Now()
	cm.mu.Lock()
	defer cm.mu.Unlock()
	r := cm.stallRecordLocked(ip, now)
	if r == nil {
		if len(cm.stalls) >= maxStallRecords {
			for k, old := range cm.stalls {
				if now.Sub(old.last) > cm.cfg.HandshakeStallMemory || len(cm.stalls) >= maxStallRecords {
					delete(cm.stalls, k)
				}
			}
		}
		r = &stallRecord{}
		cm.stalls[ip] = r
	}
	r.score += cm.cfg.HandshakeStallScore
	r.last = now
	return r.score
}

// stallRecordLocked is ip's unexpired stall record, or nil (cm.mu held).
func (cm *connManager) stallRecordLocked(ip netip.Addr, now time.Time) *stallRecord {
	r := cm.stalls[ip]
	if r != nil && now.Sub(r.last) > cm.cfg.HandshakeStallMemory {
		delete(cm.stalls, ip)
		return nil
	}
	return r
}

// stallScore is the ban score ip's recent handshake stalls add up to.
func (cm *connManager) stallScore(ip netip.Addr) int {
	cm.mu.Lock()
	defer cm.mu.Unlock()
	if r := cm.stallRecordLocked(ip, time.Now()); r != nil {
		return r.score
	}
	return 0
}
