package wire

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/cointoolkit/coin/lib/bincode"
	"github.com/cointoolkit/coin/lib/types"
)

// Protocol versions: what this code speaks and the oldest it accepts.
const (
	ProtocolVersion    uint32 = 1
	MinProtocolVersion uint32 = 1
)

// Message bounds.
const (
	MaxUserAgent = 256
	MaxAddrs     = 1000
	MaxInv       = 50_000
	MaxLocator   = 101
	MaxHeaders   = 2000
	// MaxBlockPayload and MaxTxPayload are the consensus size limits of a block and a
	// transaction (consensus.MaxBlockSize, consensus.MaxTxSize); a larger one is invalid anyway.
	MaxBlockPayload = 1_048_576
	MaxTxPayload    = 100_000
)

// Commands.
const (
	CmdVersion    = "version"
	CmdVerack     = "verack"
	CmdPing       = "ping"
	CmdPong       = "pong"
	CmdGetAddr    = "getaddr"
	CmdAddr       = "addr"
	CmdInv        = "inv"
	CmdGetData    = "getdata"
	CmdNotFound   = "notfound"
	CmdGetHeaders = "getheaders"
	CmdHeaders    = "headers"
	CmdBlock      = "block"
	CmdTx         = "tx"
	// CmdSendBlocks asks a peer to push its new blocks in full, unannounced (high-bandwidth
	// relay, after BIP 152's sendcmpct); a peer that does not know it ignores it.
	CmdSendBlocks = "sendblocks"
)

// Decoding errors.
var (
	// ErrUnknownCommand is returned by Decode for a command this version does not know; the
	// frame itself was well formed, so a peer ignores it.
	ErrUnknownCommand = errors.New("wire: unknown command")
	// ErrMalformed wraps the bincode error of a payload that does not decode.
	ErrMalformed = errors.New("wire: malformed payload")
)

const (
	maxHeaderBincode = 5 + 32 + 32 + 9 + 5 + 9 // the largest bincode of a BlockHeader
	minHeaderBincode = 1 + 32 + 32 + 1 + 1 + 1
	netAddressSize   = 16 + 3 + 9 // upper bound of one NetAddress
	invVectSize      = 1 + 32     // one InvVect with a one-byte discriminant
)

// MaxPayload is the largest payload a command may carry.
func MaxPayload(cmd string) uint32 {
	switch cmd {
	case CmdVersion:
		return 1024
	case CmdVerack, CmdGetAddr:
		return 0
	case CmdPing, CmdPong:
		return 9
	case CmdAddr:
		return 3 + MaxAddrs*netAddressSize
	case CmdInv, CmdGetData, CmdNotFound:
		return 5 + MaxInv*invVectSize
	case CmdGetHeaders:
		return 1 + MaxLocator*32 + 32
	case CmdHeaders:
		return 3 + MaxHeaders*maxHeaderBincode
	case CmdBlock:
		return MaxBlockPayload
	case CmdTx:
		return MaxTxPayload
	case CmdSendBlocks:
		return 1
	}
	return MaxPayloadSize
}

// Message is one P2P message: a command and its bincode payload.
type Message interface {
	Command() string
	Encode(w *bincode.Writer)
	Decode(r *bincode.Reader)
}

// New returns an empty message for cmd, or nil for an unknown command.
func New(cmd string) Message {
	switch cmd {
	case CmdVersion:
		return new(MsgVersion)
	case CmdVerack:
		return new(MsgVerack)
	case CmdPing:
		return new(MsgPing)
	case CmdPong:
		return new(MsgPong)
	case CmdGetAddr:
		return new(MsgGetAddr)
	case CmdAddr:
		return new(MsgAddr)
	case CmdInv:
		return new(MsgInv)
	case CmdGetData:
		return new(MsgGetData)
	case CmdNotFound:
		return new(MsgNotFound)
	case CmdGetHeaders:
		return new(MsgGetHeaders)
	case CmdHeaders:
		return new(MsgHeaders)
	case CmdBlock:
		return new(MsgBlock)
	case CmdTx:
		return new(MsgTx)
	case CmdSendBlocks:
		return new(MsgSendBlocks)
	}
	return nil
}

// Decode decodes a payload of cmd strictly: no trailing bytes, every bound enforced before
// anything is allocated.
func Decode(cmd string, payload []byte) (Message, error) {
	m := New(cmd)
	if m == nil {
		return nil, fmt.Errorf("%w %q", ErrUnknownCommand, cmd)
	}
	if uint64(len(payload)) > uint64(MaxPayload(cmd)) {
		return nil, fmt.Errorf("%w: %s of %d bytes", ErrOversize, cmd, len(payload))
	}
	r := bincode.NewReader(payload)
	m.Decode(r)
	if err := r.Finish(); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrMalformed, cmd, err)
	}
	return m, nil
}

// Payload is the bincode of m.
func Payload(m Message) []byte {
	w := bincode.NewWriter(nil)
	m.Encode(w)
	return w.Bytes()
}

// Encode is the whole frame of m for the network magic.
func Encode(magic [4]byte, m Message) []byte {
	return EncodeFrameRaw(magic, m.Command(), Payload(m))
}

// listLen reads a vector length bounded by max elements of at least minElem bytes.
func listLen(r *bincode.Reader, minElem, max int, what string) int {
	n := r.Len(minElem)
	if n > max {
		r.Fail(fmt.Errorf("%w: %d %s, at most %d", bincode.ErrLength, n, what, max))
		return 0
	}
	return n
}

// MsgVersion opens the handshake.
type MsgVersion struct {
	ProtocolVersion uint32
	Magic           [4]byte
	Genesis         types.Hash
	BestHeight      uint64
	ListenPort      uint16 // 0: not listening
	Nonce           uint64 // random per node process: detects self and duplicate connections
	UserAgent       string
}

func (*MsgVersion) Command() string { return CmdVersion }

func (m *MsgVersion) Encode(w *bincode.Writer) {
	w.U32(m.ProtocolVersion)
	w.Raw(m.Magic[:])
	w.Raw(m.Genesis[:])
	w.U64(m.BestHeight)
	w.U16(m.ListenPort)
	w.U64(m.Nonce)
	w.VarBytes([]byte(m.UserAgent))
}

func (m *MsgVersion) Decode(r *bincode.Reader) {
	m.ProtocolVersion = r.U32()
	r.Raw(m.Magic[:])
	r.Raw(m.Genesis[:])
	m.BestHeight = r.U64()
	m.ListenPort = r.U16()
	m.Nonce = r.U64()
	ua := r.VarBytes(MaxUserAgent)
	for _, c := range ua {
		if c < 0x20 || c > 0x7e {
			r.Fail(fmt.Errorf("%w: user agent is not printable ASCII", bincode.ErrInvalid))
			return
		}
	}
	m.UserAgent = string(ua)
}

// MsgVerack accepts a version.
type MsgVerack struct{}

func (*MsgVerack) Command() string          { return CmdVerack }
func (*MsgVerack) Encode(w *bincode.Writer) {}
func (*MsgVerack) Decode(r *bincode.Reader) {}

// MsgPing asks for a pong with the same nonce.
type MsgPing struct{ Nonce uint64 }

func (*MsgPing) Command() string            { return CmdPing }
func (m *MsgPing) Encode(w *bincode.Writer) { w.U64(m.Nonce) }
func (m *MsgPing) Decode(r *bincode.Reader) { m.Nonce = r.U64() }

// MsgSendBlocks tells the peer whether to push its new tips to us as whole `block`
// messages, unannounced and unrequested (Push true: we chose it as one of our few
// high-bandwidth peers), or to announce them with `headers` as to any peer (false, the
// default). Like BIP 152's sendcmpct in high-bandwidth mode, with full blocks.
type MsgSendBlocks struct{ Push bool }

func (*MsgSendBlocks) Command() string            { return CmdSendBlocks }
func (m *MsgSendBlocks) Encode(w *bincode.Writer) { w.Bool(m.Push) }
func (m *MsgSendBlocks) Decode(r *bincode.Reader) { m.Push = r.Bool() }

// MsgPong answers a ping.
type MsgPong struct{ Nonce uint64 }

func (*MsgPong) Command() string            { return CmdPong }
func (m *MsgPong) Encode(w *bincode.Writer) { w.U64(m.Nonce) }
func (m *MsgPong) Decode(r *bincode.Reader) { m.Nonce = r.U64() }

// MsgGetAddr asks for known peer addresses.
type MsgGetAddr struct{}

func (*MsgGetAddr) Command() string          { return CmdGetAddr }
func (*MsgGetAddr) Encode(w *bincode.Writer) {}
func (*MsgGetAddr) Decode(r *bincode.Reader) {}

// NetAddress is a peer's listening address: an IPv6 or IPv4-mapped IP, a port and when it
// was last seen (unix seconds).
type NetAddress struct {
	IP       [16]byte
	Port     uint16
	LastSeen uint64
}

// NewNetAddress converts an address and port.
func NewNetAddress(ap netip.AddrPort, lastSeen uint64) NetAddress {
	return NetAddress{IP: ap.Addr().As16(), Port: ap.Port(), LastSeen: lastSeen}
}

// AddrPort is the address as a netip.AddrPort (IPv4-mapped addresses unmapped).
func (a NetAddress) AddrPort() netip.AddrPort {
	return netip.AddrPortFrom(netip.AddrFrom16(a.IP).Unmap(), a.Port)
}

// MsgAddr lists peer addresses.
type MsgAddr struct{ Addrs []NetAddress }

func (*MsgAddr) Command() string { return CmdAddr }

func (m *MsgAddr) Encode(w *bincode.Writer) {
	w.Varint(uint64(len(m.Addrs)))
	for _, a := range m.Addrs {
		w.Raw(a.IP[:])
		w.U16(a.Port)
		w.U64(a.LastSeen)
	}
}

func (m *MsgAddr) Decode(r *bincode.Reader) {
	n := listLen(r, 16+1+1, MaxAddrs, "addresses")
	m.Addrs = make([]NetAddress, n)
	for i := range m.Addrs {
		r.Raw(m.Addrs[i].IP[:])
		m.Addrs[i].Port = r.U16()
		m.Addrs[i].LastSeen = r.U64()
	}
}

// InvType says what an inventory hash names.
type InvType uint32

// Inventory types (a bincode enum).
const (
	InvTx InvType = iota
	InvBlock
)

func (t InvType) String() string {
	switch t {
	case InvTx:
		return "tx"
	case InvBlock:
		return "block"
	}
	return fmt.Sprintf("inv(%d)", uint32(t))
}

// InvVect names a transaction or a block.
type InvVect struct {
	Type InvType
	Hash types.Hash
}

type invList []InvVect

func (l invList) encode(w *bincode.Writer) {
	w.Varint(uint64(len(l)))
	for _, iv := range l {
		w.U32(uint32(iv.Type))
		w.Raw(iv.Hash[:])
	}
}

func decodeInvList(r *bincode.Reader) invList {
	n := listLen(r, invVectSize, MaxInv, "inventory entries")
	l := make(invList, n)
	for i := range l {
		t := InvType(r.U32())
		if r.Err() == nil && t != InvTx && t != InvBlock {
			r.Fail(fmt.Errorf("%w: inventory type %d", bincode.ErrInvalid, uint32(t)))
			return nil
		}
		l[i].Type = t
		r.Raw(l[i].Hash[:])
	}
	return l
}

// MsgInv announces transactions and blocks.
type MsgInv struct{ Inv []InvVect }

func (*MsgInv) Command() string            { return CmdInv }
func (m *MsgInv) Encode(w *bincode.Writer) { invList(m.Inv).encode(w) }
func (m *MsgInv) Decode(r *bincode.Reader) { m.Inv = decodeInvList(r) }

// MsgGetData requests transactions and blocks.
type MsgGetData struct{ Inv []InvVect }

func (*MsgGetData) Command() string            { return CmdGetData }
func (m *MsgGetData) Encode(w *bincode.Writer) { invList(m.Inv).encode(w) }
func (m *MsgGetData) Decode(r *bincode.Reader) { m.Inv = decodeInvList(r) }

// MsgNotFound answers a getdata for what the peer does not have.
type MsgNotFound struct{ Inv []InvVect }

func (*MsgNotFound) Command() string            { return CmdNotFound }
func (m *MsgNotFound) Encode(w *bincode.Writer) { invList(m.Inv).encode(w) }
func (m *MsgNotFound) Decode(r *bincode.Reader) { m.Inv = decodeInvList(r) }

// MsgGetHeaders asks for the main-chain headers after the first locator hash the peer
// knows, up to Stop (zero: as many as fit in one headers message).
type MsgGetHeaders struct {
	Locator []types.Hash
	Stop    types.Hash
}

func (*MsgGetHeaders) Command() string { return CmdGetHeaders }

func (m *MsgGetHeaders) Encode(w *bincode.Writer) {
	w.Varint(uint64(len(m.Locator)))
	for _, h := range m.Locator {
		w.Raw(h[:])
	}
	w.Raw(m.Stop[:])
}

func (m *MsgGetHeaders) Decode(r *bincode.Reader) {
	n := listLen(r, 32, MaxLocator, "locator hashes")
	m.Locator = make([]types.Hash, n)
	for i := range m.Locator {
		r.Raw(m.Locator[i][:])
	}
	r.Raw(m.Stop[:])
}

// MsgHeaders carries consecutive block headers.
type MsgHeaders struct{ Headers []types.BlockHeader }

func (*MsgHeaders) Command() string { return CmdHeaders }

func (m *MsgHeaders) Encode(w *bincode.Writer) {
	w.Varint(uint64(len(m.Headers)))
	for i := range m.Headers {
		m.Headers[i].Encode(w)
	}
}

func (m *MsgHeaders) Decode(r *bincode.Reader) {
	n := listLen(r, minHeaderBincode, MaxHeaders, "headers")
	m.Headers = make([]types.BlockHeader, n)
	for i := range m.Headers {
		m.Headers[i].Decode(r)
	}
}

// MsgBlock carries a block.
type MsgBlock struct{ Block *types.Block }

func (*MsgBlock) Command() string            { return CmdBlock }
func (m *MsgBlock) Encode(w *bincode.Writer) { m.Block.Encode(w) }
func (m *MsgBlock) Decode(r *bincode.Reader) {
	m.Block = new(types.Block)
	m.Block.Decode(r)
}

// MsgTx carries a transaction.
type MsgTx struct{ Tx *types.Transaction }

func (*MsgTx) Command() string            { return CmdTx }
func (m *MsgTx) Encode(w *bincode.Writer) { m.Tx.Encode(w) }
func (m *MsgTx) Decode(r *bincode.Reader) {
	m.Tx = new(types.Transaction)
	m.Tx.Decode(r)
}
