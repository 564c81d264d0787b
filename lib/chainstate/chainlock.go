package chainstate

import (
	"context"
	"fmt"
)

// The chain's lock is c.mu, a sync.RWMutex, with a one-slot semaphore, c.excl, in front of
// its write side: whoever locks c.mu for writing holds c.excl first (lock, lockCtx). So a
// writer that waits for another writer, a reorganisation that can take minutes, waits on
// the semaphore, where a select can give up when its context ends; it waits on c.mu itself
// only for the readers inside it, whose reads are short. Readers take c.mu.RLock alone and
// are unchanged. dcrd and btcd guard the chain with a bare sync.RWMutex; the semaphore is
// the node's block-processing slot (lib/node's lockProc) applied to the chain.

// lock takes the chain's lock for writing, waiting as long as it takes.
func (c *Chain) lock() {
	c.excl <- struct{}{}
	c.mu.Lock()
}

// lockCtx takes the chain's lock for writing, or gives up when ctx ends first: then it
// returns ctx's error (errors.Is matches context.Canceled or context.DeadlineExceeded)
// having taken nothing. A ctx that has ended already gives up without waiting.
func (c *Chain) lockCtx(ctx context.Context) error {
	if err := c.acquireCtx(ctx); err != nil {
		return err
	}
	c.mu.Lock()
	return nil
}

// unlock releases what lock or lockCtx took.
func (c *Chain) unlock() {
	c.mu.Unlock()
	<-c.excl
}

// acquireCtx takes the write semaphore alone, or returns ctx's error when ctx ends first.
// It looks at ctx through Done alone: ProcessBlock's looks at Err (one once it has the lock,
// one before each block it moves) stay the only ones.
func (c *Chain) acquireCtx(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return lockWaitErr(ctx.Err())
	default:
	}
	select {
	case c.excl <- struct{}{}:
		return nil
	case <-ctx.Done():
		return lockWaitErr(ctx.Err())
	}
}

// lockWaitErr is the error of a wait for the chain's lock that ended with its context: the
// context's error, wrapped, so that its kind is kept.
func lockWaitErr(err error) error {
	return fmt.Errorf("chainstate: stopped waiting for the chain's lock: %w", err)
}
