package chaingen

import (
	"crypto/ed25519"
	"fmt"
	"sync"
	"testing"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/types"
	"lukechampine.com/blake3"
)

// solveTries bounds the nonce search: at the regtest limit about every second nonce meets the
// target, and the retarget tests lower it by a few factors of four at most.
const solveTries = 1 << 32

// Wallet is a named key: blocks pay it, transactions spend its outputs and are signed by it.
type Wallet struct {
	Name string
	Key  ed25519.PrivateKey
	PKH  types.Hash // BLAKE3 of the public key, what outputs pay
}

// NewWallet is the wallet of name with a key derived from the name, so the same name is the
// same key in every process (a crash test's child finds its parent's outputs).
func NewWallet(name string) *Wallet {
	seed := blake3.Sum256([]byte("chaingen wallet " + name))
	return WalletFromSeed(name, seed[:])
}

// WalletFromSeed is the wallet of name with the ed25519 key of a 32-byte seed.
func WalletFromSeed(name string, seed []byte) *Wallet {
	k := ed25519.NewKeyFromSeed(seed)
	return &Wallet{Name: name, Key: k, PKH: types.Blake3(k.Public().(ed25519.PublicKey))}
}

// PublicKey is the wallet's public key.
func (w *Wallet) PublicKey() ed25519.PublicKey { return w.Key.Public().(ed25519.PublicKey) }

// Sign signs every input of tx with w's key for the network magic, whoever owns the outputs
// it spends (a test of a wrong key, or of a wrong magic).
func (w *Wallet) Sign(tx *types.Transaction, magic [4]byte) *types.Transaction {
	types.SignInputs(tx, w.Key, magic)
	return tx
}

// Template says where a block goes: its parent, height, target and timestamp. Next derives
// it from a named parent; NextOn takes it from elsewhere, for example a live node's
// NextBlock.
type Template struct {
	Parent    types.Hash
	Height    uint64
	Target    uint32
	Timestamp uint64
	Pool      uint64 // decay pool after the parent: the coinbase claims its release
}

// panicTB stands in for a missing testing.TB: a failure panics.
type panicTB struct{ testing.TB }

func (panicTB) Helper()                        {}
func (panicTB) Fatal(args ...any)              { panic(fmt.Sprint(args...)) }
func (panicTB) Fatalf(format string, a ...any) { panic(fmt.Sprintf(format, a...)) }

type entry struct {
	b      *types.Block
	height uint64
	parent string // "" for genesis and for blocks on a parent the generator did not build
}

// Generator builds blocks and transactions for one network. It is safe for concurrent use;
// the blocks it returns are the caller's to submit (and, for mungers, to change).
type Generator struct {
	tb  testing.TB
	net *params.Network

	mu      sync.Mutex
	miner   *Wallet
	wallets map[string]*Wallet
	byPKH   map[types.Hash]*Wallet
	blocks  map[string]*entry
	byHash  map[types.Hash]string
	txs     map[string]*types.Transaction
	outputs map[types.Outpoint]Output
	fees    map[types.Hash]uint64 // the fee each built transaction was built to pay
	taken   map[types.Outpoint]bool
}

// New is a generator for net (regtest when nil) whose failures end the test through tb (or
// panic when tb is nil: a fixture built once for many tests). It knows the genesis block as
// "genesis"; coinbases pay the wallet "miner" until SetMiner.
func New(tb testing.TB, net *params.Network) *Generator {
	if net == nil {
		net = params.Regtest
	}
	if tb == nil {
		tb = panicTB{}
	}
	g := &Generator{tb: tb, net: net, wallets: map[string]*Wallet{}, byPKH: map[types.Hash]*Wallet{},
		blocks: map[string]*entry{}, byHash: map[types.Hash]string{}, txs: map[string]*types.Transaction{},
		outputs: map[types.Outpoint]Output{}, fees: map[types.Hash]uint64{}, taken: map[types.Outpoint]bool{}}
	g.miner = g.Wallet("miner")
	g.register("genesis", net.GenesisBlock(), 0, "")
	return g
}

// Network is the generator's network.
func (g *Generator) Network() *params.Network { return g.net }

// Wallet is the wallet called name, created (NewWallet) on first use.
func (g *Generator) Wallet(name string) *Wallet {
	g.mu.Lock()
	w, ok := g.wallets[name]
	g.mu.Unlock()
	if ok {
		return w
	}
	return g.AddWallet(NewWallet(name))
}

// AddWallet makes w known under its name, so outputs paying it can be spent and signed.
func (g *Generator) AddWallet(w *Wallet) *Wallet {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.wallets[w.Name] = w
	g.byPKH[w.PKH] = w
	return w
}

// Miner is the wallet that coinbases pay.
func (g *Generator) Miner() *Wallet {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.miner
}

// SetMiner makes coinbases pay w (and makes w known).
func (g *Generator) SetMiner(w *Wallet) {
	g.AddWallet(w)
	g.mu.Lock()
	g.miner = w
	g.mu.Unlock()
}

// owner is the known wallet paid by pkh.
func (g *Generator) owner(pkh types.Hash) (*Wallet, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	w, ok := g.byPKH[pkh]
	return w, ok
}

// Block is the block called name.
func (g *Generator) Block(name string) *types.Block {
	g.tb.Helper()
	return g.entry(name).b
}

// Height is the height of the block called name.
func (g *Generator) Height(name string) uint64 {
	g.tb.Helper()
	return g.entry(name).height
}

// Has reports whether a block is called name.
func (g *Generator) Has(name string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	_, ok := g.blocks[name]
	return ok
}

func (g *Generator) entry(name string) *entry {
	g.tb.Helper()
	g.mu.Lock()
	e, ok := g.blocks[name]
	g.mu.Unlock()
	if !ok {
		g.tb.Fatalf("chaingen: no block called %q", name)
	}
	return e
}

// NameOf is the name of the block with hash h, or the hash itself when none has it.
func (g *Generator) NameOf(h types.Hash) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if name, ok := g.byHash[h]; ok && g.blocks[name].b.Hash() == h {
		return name
	}
	for name, e := range g.blocks { // a block changed after it was built
		if e.b.Hash() == h {
			return name
		}
	}
	return h.String()
}

// register stores b under name (its hash when name is "") and records its outputs.
func (g *Generator) register(name string, b *types.Block, height uint64, parent string) string {
	h := b.Hash()
	if name == "" {
		name = h.String()
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.blocks[name] = &entry{b: b, height: height, parent: parent}
	g.byHash[h] = name
	for _, tx := range b.Transactions {
		g.recordLocked(tx, height, true)
	}
	return name
}

// Put stores b under name as a child of the named parent: a block built by hand, or a
// copy of a built block with a change its hash does not commit to (see Clone).
func (g *Generator) Put(name, parent string, b *types.Block) *types.Block {
	g.tb.Helper()
	g.register(name, b, g.Height(parent)+1, parent)
	return b
}

// Clone stores a deep copy of the block called from under name and returns it: the copy
// has the same hash, so changing a signature in it makes a second, tampered copy.
func (g *Generator) Clone(name, from string) *types.Block {
	g.tb.Helper()
	e := g.entry(from)
	c, err := types.DecodeBlock(e.b.Bytes())
	if err != nil {
		g.tb.Fatal(err)
	}
	g.mu.Lock()
	g.blocks[name] = &entry{b: c, height: e.height, parent: e.parent}
	g.mu.Unlock()
	return c
}

// Next builds, solves and names a block on the named parent: one minute after the parent,
// at the network's proof-of-work limit, its coinbase paying the miner the subsidy and the
// fees of txs, with the block's name as coinbase extra (so siblings differ). The mungers
// change the block before it is solved, in order; one that changes the transactions
// recomputes the merkle root itself (FixMerkle) unless a bad root is the point.
func (g *Generator) Next(name, parent string, txs []*types.Transaction, mungers ...Munger) *types.Block {
	g.tb.Helper()
	p := g.entry(parent)
	t := Template{Parent: p.b.Hash(), Height: p.height + 1, Target: g.net.PowLimitBits,
		Timestamp: p.b.Header.Timestamp + 60}
	return g.build(name, parent, t, txs, mungers)
}

// NextOn is Next on a template instead of a named parent, for blocks on a chain the
// generator does not hold whole (a live node's tip); name may be "" (the block is then
// known by its hash).
func (g *Generator) NextOn(name string, t Template, txs []*types.Transaction, mungers ...Munger) *types.Block {
	g.tb.Helper()
	g.mu.Lock()
	parent := g.byHash[t.Parent]
	g.mu.Unlock()
	return g.build(name, parent, t, txs, mungers)
}

func (g *Generator) build(name, parent string, t Template, txs []*types.Transaction, mungers []Munger) *types.Block {
	g.tb.Helper()
	var fees uint64
	for _, tx := range txs {
		fees += g.FeeOf(tx)
	}
	reward, err := consensus.MaxCoinbaseValue(t.Height, fees, t.Pool)
	if err != nil {
		g.tb.Fatal(err)
	}
	extra := []byte(name)
	if len(extra) > types.MaxCoinbaseExtra {
		extra = extra[:types.MaxCoinbaseExtra]
	}
	b := assemble(t, g.Miner().PKH, reward, extra, txs)
	for _, m := range mungers {
		m(b)
	}
	if err := types.SolveBlock(b, solveTries); err != nil {
		g.tb.Fatalf("chaingen: block %s: %v", name, err)
	}
	g.register(name, b, t.Height, parent)
	return b
}

// Chain builds n empty blocks prefix1..prefixN, each on the one before, the first on
// parent, and returns the last one's name.
func (g *Generator) Chain(prefix, parent string, n int) string {
	g.tb.Helper()
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("%s%d", prefix, i)
		g.Next(name, parent, nil)
		parent = name
	}
	return parent
}

// Branch is the blocks from genesis (excluded) to the named block, oldest first.
func (g *Generator) Branch(name string) []*types.Block {
	g.tb.Helper()
	var out []*types.Block
	for e := g.entry(name); e.height > 0; {
		out = append(out, e.b)
		if e.parent == "" {
			break
		}
		e = g.entry(e.parent)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}
