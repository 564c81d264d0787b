package rpcserver

import (
	"context"
	"time"

	"github.com/cointoolkit/coin/lib/chainstate"
	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/rpcapi"
)

// waitfornewblock and waitforblockheight, as Bitcoin Core's: they wait for a block event of
// the node's Notifier (or look at the tip every waitPoll without one) and return the tip
// when the condition holds or the time is up. A call cannot outlast the server's call limit
// (jsonrpc.Options.Timeout, 30 s on coin-node): the wait ends waitMargin before it, so the
// caller gets the tip rather than a timeout error; a longer wait is a loop of calls.

const (
	waitPoll   = 100 * time.Millisecond
	waitMargin = time.Second
)

// waitTip waits until done(tip) holds, timeoutMS milliseconds pass (0: no bound of its own)
// or ctx's deadline is near, then returns the tip.
func (a *api) waitTip(ctx context.Context, timeoutMS uint64, done func(*chainstate.BlockNode) bool) (any, error) {
	var stop <-chan time.Time
	limit := time.Duration(-1)
	if timeoutMS > 0 {
		limit = time.Duration(min(timeoutMS, uint64(1<<62)/uint64(time.Millisecond))) * time.Millisecond
	}
	if dl, ok := ctx.Deadline(); ok {
		if left := time.Until(dl) - waitMargin; limit < 0 || left < limit {
			limit = max(left, 0)
		}
	}
	if limit >= 0 {
		t := time.NewTimer(limit)
		defer t.Stop()
		stop = t.C
	}
	var n *Notifier
	if ns, ok := a.b.Backend.(notifierSource); ok {
		n = ns.Notifier()
		n.waiters.Add(1)
		defer n.waiters.Add(-1)
	}
	c := a.b.Chain()
	for {
		var next <-chan struct{}
		var poll *time.Timer
		if n != nil {
			next = n.BlockEvent() // taken before the tip is read: no event falls between
		} else {
			poll = time.NewTimer(waitPoll)
		}
		tip := c.Tip()
		if done(tip) {
			if poll != nil {
				poll.Stop()
			}
			return rpcapi.BlockRef{Hash: tip.Hash.String(), Height: tip.Height}, nil
		}
		var pollC <-chan time.Time
		if poll != nil {
			pollC = poll.C
		}
		select {
		case <-next:
		case <-pollC:
		case <-stop:
			tip := c.Tip()
			return rpcapi.BlockRef{Hash: tip.Hash.String(), Height: tip.Height}, nil
		case <-ctx.Done():
			if poll != nil {
				poll.Stop()
			}
			return nil, ctx.Err()
		}
		if poll != nil {
			poll.Stop()
		}
	}
}

func (a *api) waitForNewBlock(ctx context.Context, p jsonrpc.Params) (any, error) {
	timeout, err := p.OptUint64(0, 0)
	if err != nil {
		return nil, err
	}
	start := a.b.Chain().Tip()
	return a.waitTip(ctx, timeout, func(tip *chainstate.BlockNode) bool { return tip != start })
}

func (a *api) waitForBlockHeight(ctx context.Context, p jsonrpc.Params) (any, error) {
	height, err := p.Uint64(0)
	if err != nil {
		return nil, err
	}
	timeout, err := p.OptUint64(1, 0)
	if err != nil {
		return nil, err
	}
	return a.waitTip(ctx, timeout, func(tip *chainstate.BlockNode) bool { return tip.Height >= height })
}
