package chainstate

import (
	"fmt"
	"slices"

	"github.com/cointoolkit/coin/lib/bincode"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/types"
)

// Common-input clusters (DESIGN 8) as a union-find forest in three journaled tables, so that
// finding an address's cluster costs O(log n) reads and merging two clusters a handful of
// writes, however many addresses they hold, and a reorg undoes merges like any other change.
//
// Every address has a node, ClusterIDOf(address). A node with a parent record is not a root;
// a root is the node of a cluster. The cluster's id (its name, what the RPC calls cluster_id)
// is decided by the merge rule (consensus.Survivor: union by balance), independent of which
// root the forest keeps: the forest unites by size, so a tree of n nodes is at most log2(n)
// deep, and the root record says the name. An address that has never merged has no record
// at all: its node is its root and its own name. The balances stay keyed by name (table 'c').
const (
	pfxClusterParent = 'p' // node → parent node (absent: a root)
	pfxClusterRoot   = 'n' // root node → clusterRoot (absent: a one-address cluster named by its node)
	pfxClusterName   = 'N' // cluster id → its root node (absent: the id is its own root)
)

// maxClusterDepth bounds a find: union by size keeps trees below 64 levels for any number of
// nodes, so a longer path is a corrupt database.
const maxClusterDepth = 64

type clusterRoot struct {
	Name types.Hash
	Size uint64 // addresses in the cluster
}

func encodeHash(w *bincode.Writer, h types.Hash) { w.Raw(h[:]) }
func decodeHash(r *bincode.Reader) types.Hash {
	var h types.Hash
	r.Raw(h[:])
	return h
}

var (
	clusterParentTable = &tableOf[types.Hash]{name: "cluster parent", pfx: pfxClusterParent, keyLen: 33,
		encode: encodeHash, decode: decodeHash}
	clusterRootTable = &tableOf[clusterRoot]{name: "cluster root", pfx: pfxClusterRoot, keyLen: 33,
		encode: func(w *bincode.Writer, r clusterRoot) {
			w.Raw(r.Name[:])
			w.U64(r.Size)
		},
		decode: func(r *bincode.Reader) clusterRoot {
			var c clusterRoot
			r.Raw(c.Name[:])
			c.Size = r.U64()
			return c
		}}
	clusterNameTable = &tableOf[types.Hash]{name: "cluster name", pfx: pfxClusterName, keyLen: 33,
		encode: encodeHash, decode: decodeHash}
)

// stateGet reads a key of a journaled table: through the write cache's slots while a block
// connects, through the cache and the database under the read lock otherwise, or through a
// block's own pending changes first.
type stateGet func(key []byte) (any, error)

// clusterInfo is where an address's cluster stands.
type clusterInfo struct {
	Root types.Hash
	Name types.Hash
	Size uint64
}

// findCluster follows pkh's node to its root.
func findCluster(get stateGet, pkh types.Hash) (clusterInfo, error) {
	return findNode(get, consensus.ClusterIDOf(pkh))
}

func findNode(get stateGet, x types.Hash) (clusterInfo, error) {
	for depth := 0; ; depth++ {
		if depth > maxClusterDepth {
			return clusterInfo{}, storageErr("cluster forest", fmt.Errorf("node %s is deeper than %d", x, maxClusterDepth))
		}
		v, err := get(hashKey(pfxClusterParent, x))
		if err != nil {
			return clusterInfo{}, err
		}
		if v == nil {
			break
		}
		x = v.(types.Hash)
	}
	v, err := get(hashKey(pfxClusterRoot, x))
	if err != nil {
		return clusterInfo{}, err
	}
	if v == nil {
		return clusterInfo{Root: x, Name: x, Size: 1}, nil
	}
	r := v.(clusterRoot)
	return clusterInfo{Root: x, Name: r.Name, Size: r.Size}, nil
}

// clusterByID finds a cluster by its id: its root and size, or false when no cluster has
// that id (it merged into another, or no address ever started it).
func clusterByID(get stateGet, id types.Hash) (clusterInfo, bool, error) {
	root := id
	if v, err := get(hashKey(pfxClusterName, id)); err != nil {
		return clusterInfo{}, false, err
	} else if v != nil {
		root = v.(types.Hash)
	}
	ci, err := findNode(get, root)
	if err != nil || ci.Name != id || ci.Root != root {
		return clusterInfo{}, false, err
	}
	return ci, true, nil
}

func balanceOf(get stateGet, name types.Hash) (uint64, error) {
	v, err := get(hashKey(pfxCluster, name))
	if err != nil || v == nil {
		return 0, err
	}
	return v.(uint64), nil
}

// clusterBlock applies one block's cluster changes transaction by transaction: merges and
// balances as the block's earlier transactions left them (DESIGN 8), over the chain's state
// before the block. stage writes the result into the block's journal.
type clusterBlock struct {
	c    *Chain
	vals map[string]any // key → new value (nil: deleted)
}

func (cb *clusterBlock) get(k []byte) (any, error) {
	if v, ok := cb.vals[string(k)]; ok {
		return v, nil
	}
	s, err := cb.c.slotLocked(k)
	if err != nil {
		return nil, err
	}
	return s.val, nil
}

func (cb *clusterBlock) set(k []byte, v any) { cb.vals[string(k)] = v }

func (cb *clusterBlock) addBalance(name types.Hash, d int64) error {
	k := hashKey(pfxCluster, name)
	bal, err := balanceOf(cb.get, name)
	if err != nil {
		return err
	}
	nb := int64(bal) + d
	switch {
	case nb < 0:
		return storageErr("cluster balance", fmt.Errorf("cluster %s would go negative", name))
	case nb == 0:
		cb.set(k, nil)
	default:
		cb.set(k, uint64(nb))
	}
	return nil
}

// tx applies one transaction: its inputs' clusters merge, then its inputs leave their
// cluster's balance and its outputs join their payees'.
func (cb *clusterBlock) tx(spent []*consensus.UtxoEntry, outs []types.TxOutput) error {
	if len(spent) > 1 {
		var cs []clusterInfo
		for _, e := range spent {
			ci, err := findCluster(cb.get, e.PubKeyHash)
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
		ci, err := findCluster(cb.get, e.PubKeyHash)
		if err != nil {
			return err
		}
		if err := cb.addBalance(ci.Name, -int64(e.Value)); err != nil {
			return err
		}
	}
	for i := range outs {
		ci, err := findCluster(cb.get, outs[i].PubKeyHash)
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
		bal, err := balanceOf(cb.get, ci.Name)
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
			cb.set(hashKey(pfxCluster, ci.Name), nil)
			if ci.Name != ci.Root {
				cb.set(hashKey(pfxClusterName, ci.Name), nil)
			}
		}
		if i != big {
			cb.set(hashKey(pfxClusterParent, ci.Root), root)
			cb.set(hashKey(pfxClusterRoot, ci.Root), nil)
		}
	}
	if total == 0 {
		cb.set(hashKey(pfxCluster, survivor), nil)
	} else {
		cb.set(hashKey(pfxCluster, survivor), total)
	}
	cb.set(hashKey(pfxClusterRoot, root), clusterRoot{Name: survivor, Size: size})
	if survivor != root {
		cb.set(hashKey(pfxClusterName, survivor), root)
	}
	return nil
}

// stage writes the block's cluster changes into its journal, in key order.
func (cb *clusterBlock) stage(j *blockJournal) {
	keys := make([]string, 0, len(cb.vals))
	for k := range cb.vals {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if v := cb.vals[k]; v == nil {
			j.del([]byte(k))
		} else {
			j.put([]byte(k), v)
		}
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
	ci, err := findCluster(c.lockedGet, pkh)
	if err != nil {
		return ClusterSummary{}, err
	}
	bal, err := balanceOf(c.lockedGet, ci.Name)
	return ClusterSummary{ID: ci.Name, Balance: bal, Addresses: ci.Size, Supply: c.stats.UtxoTotal}, err
}

// ClusterByID finds a cluster by its id at the tip; false when no cluster has it now (it
// merged into another, or it holds nothing and never merged).
func (c *Chain) ClusterByID(id types.Hash) (ClusterSummary, bool, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	ci, ok, err := clusterByID(c.lockedGet, id)
	if err != nil || !ok {
		return ClusterSummary{}, false, err
	}
	bal, err := balanceOf(c.lockedGet, ci.Name)
	if err != nil {
		return ClusterSummary{}, false, err
	}
	if bal == 0 && ci.Size == 1 {
		return ClusterSummary{}, false, nil
	}
	return ClusterSummary{ID: ci.Name, Balance: bal, Addresses: ci.Size, Supply: c.stats.UtxoTotal}, true, nil
}
