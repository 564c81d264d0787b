package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/types"
)

var magic = params.Regtest.Magic

func sampleMessages() []Message {
	g := params.Regtest.GenesisBlock()
	h := types.Hash{1, 2, 3}
	return []Message{
		&MsgVersion{ProtocolVersion: ProtocolVersion, Magic: magic, Genesis: params.Regtest.GenesisHash, BestHeight: 1234,
			ListenPort: 38333, Nonce: 0xdeadbeefcafe, UserAgent: "coin-node/test"},
		&MsgVerack{},
		&MsgPing{Nonce: 7},
		&MsgSendBlocks{Push: true}, &MsgSendBlocks{},
		&MsgPong{Nonce: 1 << 60},
		&MsgGetAddr{},
		&MsgAddr{Addrs: []NetAddress{NewNetAddress(netip.MustParseAddrPort("127.0.0.1:38333"), 1_767_225_600),
			NewNetAddress(netip.MustParseAddrPort("[2001:db8::1]:18333"), 5)}},
		&MsgInv{Inv: []InvVect{{InvTx, h}, {InvBlock, g.Hash()}}},
		&MsgGetData{Inv: []InvVect{{InvBlock, h}}},
		&MsgNotFound{Inv: []InvVect{{InvTx, h}}},
		&MsgGetHeaders{Locator: []types.Hash{h, g.Hash()}, Stop: h},
		&MsgHeaders{Headers: []types.BlockHeader{g.Header, g.Header}},
		&MsgBlock{Block: g},
		&MsgTx{Tx: g.Transactions[0]},
	}
}

func TestRoundTrip(t *testing.T) {
	for _, m := range sampleMessages() {
		frame := Encode(magic, m)
		h, payload, err := ReadFrame(bytes.NewReader(frame), magic)
		if err != nil {
			t.Fatalf("%s: %v", m.Command(), err)
		}
		if h.Command != m.Command() || int(h.Length) != len(payload) {
			t.Fatalf("%s: header %+v", m.Command(), h)
		}
		got, err := Decode(h.Command, payload)
		if err != nil {
			t.Fatalf("%s: decode: %v", m.Command(), err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Fatalf("%s: round trip differs:\n got %#v\nwant %#v", m.Command(), got, m)
		}
		if !bytes.Equal(Encode(magic, got), frame) {
			t.Fatalf("%s: re-encoding differs", m.Command())
		}
	}
}

// TestFrameLayout pins the protocol §12 layout with a fixed vector.
func TestFrameLayout(t *testing.T) {
	f := Encode(magic, &MsgPing{Nonce: 1})
	want := append([]byte("RCON"), []byte("ping\x00\x00\x00\x00\x00\x00\x00\x00")...)
	want = binary.LittleEndian.AppendUint32(want, 1)
	sum := Checksum([]byte{1})
	want = append(want, sum[:]...)
	want = append(want, 1)
	if !bytes.Equal(f, want) {
		t.Fatalf("frame %x, want %x", f, want)
	}
}

func TestLimitsMatchConsensus(t *testing.T) {
	if MaxBlockPayload != consensus.MaxBlockSize || MaxTxPayload != consensus.MaxTxSize {
		t.Fatalf("wire limits %d/%d differ from consensus %d/%d", MaxBlockPayload, MaxTxPayload, consensus.MaxBlockSize, consensus.MaxTxSize)
	}
	// The largest message of each bounded kind fits its own bound and the frame bound.
	full := &MsgInv{Inv: make([]InvVect, MaxInv)}
	if n := len(Payload(full)); uint32(n) > MaxPayload(CmdInv) || n > MaxPayloadSize {
		t.Fatalf("full inv of %d bytes exceeds %d", n, MaxPayload(CmdInv))
	}
	hs := &MsgHeaders{Headers: make([]types.BlockHeader, MaxHeaders)}
	for i := range hs.Headers {
		hs.Headers[i] = types.BlockHeader{Version: 1 << 31, Timestamp: 1 << 63, DifficultyTarget: 1 << 31, Nonce: 1 << 63}
	}
	if n := len(Payload(hs)); uint32(n) > MaxPayload(CmdHeaders) {
		t.Fatalf("full headers of %d bytes exceeds %d", n, MaxPayload(CmdHeaders))
	}
	addrs := &MsgAddr{Addrs: make([]NetAddress, MaxAddrs)}
	for i := range addrs.Addrs {
		addrs.Addrs[i] = NetAddress{Port: 65535, LastSeen: 1 << 63}
	}
	if n := len(Payload(addrs)); uint32(n) > MaxPayload(CmdAddr) {
		t.Fatalf("full addr of %d bytes exceeds %d", n, MaxPayload(CmdAddr))
	}
	loc := &MsgGetHeaders{Locator: make([]types.Hash, MaxLocator)}
	if n := len(Payload(loc)); uint32(n) > MaxPayload(CmdGetHeaders) {
		t.Fatalf("full getheaders of %d bytes exceeds %d", n, MaxPayload(CmdGetHeaders))
	}
	for _, cmd := range []string{CmdVersion, CmdBlock, CmdTx, "other"} {
		if MaxPayload(cmd) > MaxPayloadSize {
			t.Fatalf("%s bound above the frame bound", cmd)
		}
	}
}

func header(magic [4]byte, cmd string, length uint32, sum [4]byte) []byte {
	b := make([]byte, HeaderSize)
	copy(b, magic[:])
	copy(b[4:16], cmd)
	binary.LittleEndian.PutUint32(b[16:], length)
	copy(b[20:], sum[:])
	return b
}

func TestFrameErrors(t *testing.T) {
	good := Encode(magic, &MsgPing{Nonce: 9})
	badSum := bytes.Clone(good)
	badSum[20] ^= 1
	badPayload := bytes.Clone(good)
	badPayload[HeaderSize] ^= 1
	cases := []struct {
		name  string
		frame []byte
		want  error
	}{
		{"wrong magic", append([]byte("TCON"), good[4:]...), ErrBadMagic},
		{"garbage", []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), ErrBadMagic},
		{"upper-case command", header(magic, "PING", 0, Checksum(nil)), ErrBadCommand},
		{"empty command", header(magic, "", 0, Checksum(nil)), ErrBadCommand},
		{"data after padding", header(magic, "ping\x00x", 0, Checksum(nil)), ErrBadCommand},
		{"huge length", header(magic, "block", 0xffffffff, [4]byte{}), ErrOversize},
		{"frame bound", header(magic, "unknown", MaxPayloadSize+1, [4]byte{}), ErrOversize},
		{"command bound", header(magic, "ping", 10, [4]byte{}), ErrOversize},
		{"bad checksum", badSum, ErrBadChecksum},
		{"corrupted payload", badPayload, ErrBadChecksum},
	}
	for _, c := range cases {
		_, _, err := ReadFrame(bytes.NewReader(c.frame), magic)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: err %v, want %v", c.name, err, c.want)
		}
	}
	// A truncated payload is an I/O error, not a frame error.
	_, _, err := ReadFrame(bytes.NewReader(good[:len(good)-1]), magic)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("truncated: %v", err)
	}
	// Wrong magic names both.
	_, _, err = ReadFrame(bytes.NewReader(append([]byte("TCON"), good[4:]...)), magic)
	if err == nil || !strings.Contains(err.Error(), `"TCON"`) || !strings.Contains(err.Error(), `"RCON"`) {
		t.Fatalf("wrong-magic error %v does not name both", err)
	}
}

// TestHugeLengthAllocatesLittle: a length prefix alone does not make the reader allocate.
func TestHugeLengthAllocatesLittle(t *testing.T) {
	f := header(magic, "block", MaxBlockPayload, [4]byte{})
	f = append(f, make([]byte, 100)...)
	res := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			ReadFrame(bytes.NewReader(f), magic)
		}
	})
	if per := res.AllocedBytesPerOp(); per > 200<<10 {
		t.Fatalf("reading a truncated 1 MiB frame allocated %d bytes", per)
	}
}

func TestDecodeErrors(t *testing.T) {
	cases := []struct {
		cmd     string
		payload []byte
	}{
		{CmdPing, nil},
		{CmdPing, []byte{1, 2}},                             // trailing
		{CmdPing, []byte{251, 1, 0}},                        // non-minimal varint
		{CmdVerack, []byte{0}},                              // trailing byte
		{CmdInv, []byte{1, 2}},                              // unknown inventory type... and truncated
		{CmdInv, append([]byte{1, 5}, make([]byte, 32)...)}, // inventory type 5
		{CmdInv, []byte{253, 255, 255, 255, 255, 255, 255, 255, 255}},
		{CmdHeaders, []byte{252, 0, 0, 1, 0}},
		{CmdGetHeaders, append([]byte{102}, make([]byte, 102*32+32)...)}, // 102 locator hashes
		{CmdVersion, append(Payload(&MsgVersion{}), 0)},
		{CmdBlock, []byte{1}},
		{CmdTx, []byte{}},
	}
	for _, c := range cases {
		if _, err := Decode(c.cmd, c.payload); !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrOversize) {
			t.Errorf("%s (%d bytes): err %v, want ErrMalformed or ErrOversize", c.cmd, len(c.payload), err)
		}
	}
	bad := Payload(&MsgVersion{UserAgent: "ok"})
	bad[len(bad)-1] = 0x07
	if _, err := Decode(CmdVersion, bad); !errors.Is(err, ErrMalformed) {
		t.Errorf("control character in user agent: %v", err)
	}
	if _, err := Decode("frobnicate", nil); !errors.Is(err, ErrUnknownCommand) {
		t.Errorf("unknown command: %v", err)
	}
	big := &MsgAddr{Addrs: make([]NetAddress, MaxAddrs+1)}
	if _, err := Decode(CmdAddr, Payload(big)); err == nil {
		t.Errorf("addr with %d entries decoded", MaxAddrs+1)
	}
}

func TestNetAddress(t *testing.T) {
	for _, s := range []string{"127.0.0.1:38333", "[::1]:1", "[2001:db8::7]:65535"} {
		ap := netip.MustParseAddrPort(s)
		if got := NewNetAddress(ap, 0).AddrPort(); got != ap {
			t.Errorf("%s: got %s", s, got)
		}
	}
}
