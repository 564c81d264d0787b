package chainstate

import (
	"fmt"
	"slices"

	"github.com/cointoolkit/coin/lib/bincode"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/types"
)

// Common-input clusters (protocol §8) as a union-find forest in journaled tables, so that
// finding an address's cluster costs O(log n) reads and merging two clusters a handful of
// writes, however many addresses they hold, and a reorg undoes merges like any other change.
//
// Every address has a node, ClusterIDOf(address). A node's record ('p') says either that it
// hangs under a parent node or, for a root (the node of a cluster), the cluster's name and
// size. An address that has never merged has no record at all: its node is its root, its own
// name, and finding its cluster is one read that finds nothing. The cluster's id (its name,
// what the RPC calls cluster_id) is decided by the merge rule (consensus.Survivor: union by
// balance), independent of which root the forest keeps: the forest unites by size, so a tree
// of n nodes is at most log2(n) deep. The balances stay keyed by name (table 'c').
const (
	pfxClusterNode = 'p' // node → clusterNode (absent: a one-address cluster named by its node)
	pfxClusterName = 'N' // cluster id → its root node (absent: the id is its own root)
)

// maxClusterDepth bounds a find: union by size keeps trees below 64 levels for any number of
// nodes, so a longer path is a corrupt database.
const maxClusterDepth = 64

// clusterNode is a node's record: under Parent, or (Root) the root of a cluster of Size
// addresses named Name.
type clusterNode struct {
	Root   bool
	Parent types.Hash // not a root: the node above
	Name   types.Hash // a root: the cluster's id
	Size   uint64     // a root: addresses in the cluster
}

// Stored forms of a node record: a tag byte, then the parent, or the name and the size.
const (
	nodeTagParent = 0
	nodeTagRoot   = 1
)

func encodeClusterNode(w *bincode.Writer, n clusterNode) {
	if !n.Root {
		w.U8(nodeTagParent)
		w.Raw(n.Parent[:])
		return
	}
	w.U8(nodeTagRoot)
	w.Raw(n.Name[:])
	w.U64(n.Size)
}

func decodeClusterNode(r *bincode.Reader) clusterNode {
	var n clusterNode
	switch tag := r.U8(); tag {
	case nodeTagParent:
		r.Raw(n.Parent[:])
	case nodeTagRoot:
		n.Root = true
		r.Raw(n.Name[:])
		n.Size = r.U64()
	default:
		if r.Err() == nil {
			r.Fail(fmt.Errorf("cluster node record tag %d", tag))
		}
	}
	return n
}

func encodeHash(w *bincode.Writer, h types.Hash) { w.Raw(h[:]) }
func decodeHash(r *bincode.Reader) types.Hash {
	var h types.Hash
	r.Raw(h[:])
	return h
}

var (
	clusterNodeTable = &tableOf[clusterNode]{name: "cluster node", pfx: pfxClusterNode, keyLen: 33,
		encode: encodeClusterNode, decode: decodeClusterNode}
	clusterNameTable = &tableOf[types.Hash]{name: "cluster name", pfx: pfxClusterName, keyLen: 33,
		encode: encodeHash, decode: decodeHash}
)

// stateGet reads a key of a journaled table: through the write cache's slots while a block
// connects, through the cache and the database under the read lock otherwise, or through a
// block's own pending changes first. It does not keep the key it is given, so callers may
// reuse one buffer for their keys (keyBuf).
type stateGet func(key []byte) (any, error)

// keyBuf is scratch space for the key of a hash in a table: a lookup through a stateGet
// need not allocate its key.
type keyBuf [33]byte

func (b *keyBuf) of(p byte, h types.Hash) []byte {
	b[0] = p
	copy(b[1:], h[:])
	return b[:]
}

// clusterInfo is where an address's cluster stands.
type clusterInfo struct {
	Root types.Hash
	Name types.Hash
	Size uint64
}

// findCluster follows pkh's node to its root.
func findCluster(get stateGet, pkh types.Hash) (clusterInfo, error) {
	return findNode(get, new(keyBuf), consensus.ClusterIDOf(pkh))
}

// findNode follows the node x to its root, with k as scratch space for the keys.
func findNode(get stateGet, k *keyBuf, x types.Hash) (clusterInfo, error) {
	for depth := 0; ; depth++ {
		if depth > maxClusterDepth {
			return clusterInfo{}, storageErr("cluster forest", fmt.Errorf("node %s is deeper than %d", x, maxClusterDepth))
		}
		v, err := get(k.of(pfxClusterNode, x))
		if err != nil {
			return clusterInfo{}, err
		}
		if v == nil {
			return clusterInfo{Root: x, Name: x, Size: 1}, nil
		}
		n := v.(clusterNode)
		if n.Root {
			return clusterInfo{Root: x, Name: n.Name, Size: n.Size}, nil
		}
		x = n.Parent
	}
}

// clusterByID finds a cluster by its id: its root and size, or false when no cluster has
// that id (it merged into another, or no address ever started it).
func clusterByID(get stateGet, id types.Hash) (clusterInfo, bool, error) {
	var k keyBuf
	root := id
	if v, err := get(k.of(pfxClusterName, id)); err != nil {
		return clusterInfo{}, false, err
	} else if v != nil {
		root = v.(types.Hash)
	}
	ci, err := findNode(get, &k, root)
	if err != nil || ci.Name != id || ci.Root != root {
		return clusterInfo{}, false, err
	}
	return ci, true, nil
}

func balanceAt(get stateGet, k *keyBuf, name types.Hash) (uint64, error) {
	v, err := get(k.of(pfxCluster, name))
	if err != nil || v == nil {
		return 0, err
	}
	return v.(uint64), nil
}

// clusterMemo remembers, while one block connects, where the addresses it looked up stand,
// so that an address found several times (an input's owner, its change output, the input's
// value, the conduct rules' same-owner test) costs one hash and one map lookup after the
// first. The chain's view before the block (connectView) and the block's own clusters
// (clusterBlock) share it: until the block's first merge both forests are the same. A merge
// marks the roots it changes; an entry found under one of them before the merge is found
// again from its node (whose hash it keeps).
type clusterMemo struct {
	m       map[types.Hash]memoEntry // address → its node and cluster
	gen     uint32                   // merges so far
	changed map[types.Hash]uint32    // root → the merge that last changed it
}

type memoEntry struct {
	node types.Hash
	ci   clusterInfo
	gen  uint32
}

func newClusterMemo(n int) *clusterMemo {
	return &clusterMemo{m: make(map[types.Hash]memoEntry, n)}
}

// find is findCluster through the memo.
func (m *clusterMemo) find(get stateGet, k *keyBuf, pkh types.Hash) (clusterInfo, error) {
	e, ok := m.m[pkh]
	if ok {
		if m.changed == nil || e.gen >= m.changed[e.ci.Root] {
			return e.ci, nil
		}
	} else {
		e.node = consensus.ClusterIDOf(pkh)
	}
	ci, err := findNode(get, k, e.node)
	if err != nil {
		return clusterInfo{}, err
	}
	m.m[pkh] = memoEntry{node: e.node, ci: ci, gen: m.gen}
	return ci, nil
}

// merged records a merge that changed the roots of cs.
func (m *clusterMemo) merged(cs []clusterInfo) {
	m.gen++
	if m.changed == nil {
		m.changed = make(map[types.Hash]uint32)
	}
	for _, ci := range cs {
		m.changed[ci.Root] = m.gen
	}
}

// nameRec is a staged cluster name record: the root node, or deleted.
type nameRec struct {
	root types.Hash
	del  bool
}

// clusterBlock applies one block's cluster changes transaction by transaction: merges and
// balances as the block's earlier transactions left them (protocol §8), over the chain's state
// before the block. stage writes the result into the block's journal.
type clusterBlock struct {
	c     *Chain
	bal   map[types.Hash]uint64      // cluster name → new balance (0: deleted)
	nodes map[types.Hash]clusterNode // node → new record
	names map[types.Hash]nameRec     // cluster name → new name record
	memo  *clusterMemo
	getFn stateGet // cb.get, made once
	k     keyBuf
}

func newClusterBlock(c *Chain, memo *clusterMemo) *clusterBlock {
	if memo == nil {
		memo = newClusterMemo(0)
	}
	cb := &clusterBlock{c: c, bal: make(map[types.Hash]uint64), nodes: make(map[types.Hash]clusterNode),
		names: make(map[types.Hash]nameRec), memo: memo}
	cb.getFn = cb.get
	return cb
}

// get reads a cluster key as the block's transactions so far left it.
func (cb *clusterBlock) get(k []byte) (any, error) {
	if len(k) == 33 {
		var h types.Hash
		copy(h[:], k[1:])
		switch k[0] {
		case pfxCluster:
			if b, ok := cb.bal[h]; ok {
				if b == 0 {
					return nil, nil
				}
				return b, nil
			}
		case pfxClusterNode:
			if n, ok := cb.nodes[h]; ok {
				return n, nil
			}
		case pfxClusterName:
			if r, ok := cb.names[h]; ok {
				if r.del {
					return nil, nil
				}
				return r.root, nil
			}
		}
	}
	s, err := cb.c.slotLocked(k)
	if err != nil {
		return nil, err
	}
	return s.val, nil
}

func (cb *clusterBlock) balance(name types.Hash) (uint64, error) {
	if b, ok := cb.bal[name]; ok {
		return b, nil
	}
	return balanceAt(cb.getFn, &cb.k, name)
}

func (cb *clusterBlock) find(pkh types.Hash) (clusterInfo, error) {
	return cb.memo.find(cb.getFn, &cb.k, pkh)
}

func (cb *clusterBlock) addBalance(name types.Hash, d int64) error {
	bal, err := cb.balance(name)
	if err != nil {
		return err
	}
	nb := int64(bal) + d
	if nb < 0 {
		return storageErr("cluster balance", fmt.Errorf("cluster %s would go negative", name))
	}
	cb.bal[name] = uint64(nb)
	return nil
}

// tx applies one transaction: its inputs' clusters merge, then its inputs leave their
// cluster's balance and its outputs join their payees'.
func (cb *clusterBlock) tx(spent []*consensus.UtxoEntry, outs []types.TxOutput) error {
	if len(spent) > 1 {
		var buf [4]clusterInfo
		cs := buf[:0]
		for _, e := range spent {
			ci, err := cb.find(e.PubKeyHash)
			if err != nil {
				return err
			}
			if !slices.ContainsFunc(cs, func(x clusterInfo) bool { return x.Root == ci.Root }) {
				cs = append(cs, ci)
			}
		}
		if len(cs) > 1 {
			if err := cb.merge(cs); err != nil {
				return err
			}
		}
	}
	for _, e := range spent {
		ci, err := cb.find(e.PubKeyHash)
		if err != nil {
			return err
		}
		if err := cb.addBalance(ci.Name, -int64(e.Value)); err != nil {
			return err
		}
	}
	for i := range outs {
		ci, err := cb.find(outs[i].PubKeyHash)
		if err != nil {
			return err
		}
		if err := cb.addBalance(ci.Name, int64(outs[i].Value)); err != nil {
			return err
		}
	}
	return nil
}

// merge unites the clusters cs (distinct roots): the survivor's name by balance, the
// forest's root by size.
func (cb *clusterBlock) merge(cs []clusterInfo) error {
	states := make([]consensus.ClusterState, len(cs))
	var total, size uint64
	for i, ci := range cs {
		bal, err := cb.balance(ci.Name)
		if err != nil {
			return err
		}
		states[i] = consensus.ClusterState{ID: ci.Name, Balance: bal}
		total += bal
		size += ci.Size
	}
	survivor := cs[consensus.Survivor(states)].Name
	big := 0
	for i := 1; i < len(cs); i++ {
		if cs[i].Size > cs[big].Size || (cs[i].Size == cs[big].Size && cs[i].Name == survivor) {
			big = i
		}
	}
	root := cs[big].Root
	for i, ci := range cs {
		if ci.Name != survivor {
			cb.bal[ci.Name] = 0
			if ci.Name != ci.Root {
				cb.names[ci.Name] = nameRec{del: true}
			}
		}
		if i != big {
			cb.nodes[ci.Root] = clusterNode{Parent: root}
		}
	}
	cb.bal[survivor] = total
	cb.nodes[root] = clusterNode{Root: true, Name: survivor, Size: size}
	if survivor != root {
		cb.names[survivor] = nameRec{root: root}
	}
	cb.memo.merged(cs)
	return nil
}

// keys is the number of keys stage writes.
func (cb *clusterBlock) keys() int { return len(cb.names) + len(cb.bal) + len(cb.nodes) }

// stage writes the block's cluster changes into its journal, in key order: names ('N'),
// balances ('c'), then nodes ('p').
func (cb *clusterBlock) stage(j *blockJournal) {
	var k keyBuf
	for _, h := range sortedHashes(cb.names) {
		if r := cb.names[h]; r.del {
			j.del(k.of(pfxClusterName, h))
		} else {
			j.put(k.of(pfxClusterName, h), r.root)
		}
	}
	for _, h := range sortedHashes(cb.bal) {
		if b := cb.bal[h]; b == 0 {
			j.del(k.of(pfxCluster, h))
		} else {
			j.put(k.of(pfxCluster, h), b)
		}
	}
	for _, h := range sortedHashes(cb.nodes) {
		j.put(k.of(pfxClusterNode, h), cb.nodes[h])
	}
}

// ClusterSummary is a cluster as getclusterinfo shows it: its id, balance and number of
// addresses, with the circulating supply its concentration is measured against.
type ClusterSummary struct {
	ID        types.Hash
	Balance   uint64
	Addresses uint64
	Supply    uint64
}

// ClusterOfAddress is the cluster the address pkh belongs to at the tip (a new address: its
// own, empty).
func (c *Chain) ClusterOfAddress(pkh types.Hash) (ClusterSummary, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	ci, err := findCluster(c.getLocked, pkh)
	if err != nil {
		return ClusterSummary{}, err
	}
	bal, err := c.clusterLocked(ci.Name)
	return ClusterSummary{ID: ci.Name, Balance: bal, Addresses: ci.Size, Supply: c.stats.UtxoTotal}, err
}

// ClusterByID finds a cluster by its id at the tip; false when no cluster has it now (it
// merged into another, or it holds nothing and never merged).
func (c *Chain) ClusterByID(id types.Hash) (ClusterSummary, bool, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	ci, ok, err := clusterByID(c.getLocked, id)
	if err != nil || !ok {
		return ClusterSummary{}, false, err
	}
	bal, err := c.clusterLocked(ci.Name)
	if err != nil {
		return ClusterSummary{}, false, err
	}
	if bal == 0 && ci.Size == 1 {
		return ClusterSummary{}, false, nil
	}
	return ClusterSummary{ID: ci.Name, Balance: bal, Addresses: ci.Size, Supply: c.stats.UtxoTotal}, true, nil
}
