package netlab

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// The forwarder is the lab's only path between namespaces: every node's veth ends in the hub
// namespace, where the forwarder reads each frame the node sends (an AF_PACKET socket on the
// hub's end), holds it for its link's one-way delay plus jitter, drops a set share, and writes
// it unchanged (source address intact) to the destination's veth. The kernel here has no
// netem, so the delay lives in user space but in the packet path, unlike a TCP relay, which
// would hide the connecting address that peer policy depends on.

// Port is one namespace's attachment to the hub: the hub end of its veth.
type Port struct {
	Name   string       // interface name in the hub namespace
	Region int          // the port's region (delays are between regions)
	Addrs  []netip.Addr // the IPv4 addresses behind the port
	fd     int
	ifidx  int

	SentBytes, SentPkts atomic.Uint64 // frames the namespace sent (read from the port)
	RecvBytes, RecvPkts atomic.Uint64 // frames written to it
}

// LinkModel is the delay and loss between ports.
type LinkModel struct {
	Delay  func(a, b *Port) time.Duration // one-way delay from a to b
	Jitter float64                        // ± share of the delay, uniform (0.1: ±10%)
	Loss   float64                        // share of frames dropped (0.001: 0.1%)
}

// Forwarder moves frames between ports with the link model's delay and loss.
type Forwarder struct {
	hub   string
	model LinkModel
	ports []*Port
	byIP  map[netip.Addr]*Port

	mu    sync.Mutex
	links map[[2]*Port]chan frame
	cut   func(a, b *Port) bool // frames between a and b are dropped while it says so

	stop    atomic.Bool
	wg      sync.WaitGroup
	dropped atomic.Uint64 // by loss
	cutPkts atomic.Uint64 // by a partition
	overrun atomic.Uint64 // a link's queue was full
}

type frame struct {
	data []byte
	at   time.Time
}

// linkQueue bounds the frames in flight on one directed link (a tail drop beyond it).
const linkQueue = 8192

// NewForwarder opens a packet socket on each port's interface in the hub namespace and
// starts forwarding.
func NewForwarder(hub string, ports []*Port, model LinkModel) (*Forwarder, error) {
	f := &Forwarder{hub: hub, model: model, ports: ports, byIP: map[netip.Addr]*Port{}, links: map[[2]*Port]chan frame{}}
	for _, p := range ports {
		for _, a := range p.Addrs {
			f.byIP[a] = p
		}
	}
	err := InNetns(hub, func() error {
		for _, p := range ports {
			ifc, err := net.InterfaceByName(p.Name)
			if err != nil {
				return err
			}
			fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, int(htons(unix.ETH_P_ALL)))
			if err != nil {
				return fmt.Errorf("packet socket: %w", err)
			}
			if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ifc.Index}); err != nil {
				unix.Close(fd)
				return fmt.Errorf("bind %s: %w", p.Name, err)
			}
			// A receive timeout lets the reader notice Close.
			tv := unix.Timeval{Usec: 200_000}
			unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
			unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, 4<<20)
			p.fd, p.ifidx = fd, ifc.Index
		}
		return nil
	})
	if err != nil {
		for _, p := range ports {
			if p.fd > 0 {
				unix.Close(p.fd)
			}
		}
		return nil, err
	}
	for _, p := range ports {
		f.wg.Add(1)
		go f.read(p)
	}
	return f, nil
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// SetCut sets the partition: frames between ports a and b for which cut is true are dropped
// (nil heals).
func (f *Forwarder) SetCut(cut func(a, b *Port) bool) {
	f.mu.Lock()
	f.cut = cut
	f.mu.Unlock()
}

// Stats is the frames dropped by loss, by a partition, and by a full link queue.
func (f *Forwarder) Stats() (lost, cut, overrun uint64) {
	return f.dropped.Load(), f.cutPkts.Load(), f.overrun.Load()
}

// Close stops forwarding and closes the sockets.
func (f *Forwarder) Close() {
	if f.stop.Swap(true) {
		return
	}
	f.mu.Lock()
	for _, q := range f.links {
		close(q)
	}
	f.links = nil
	f.mu.Unlock()
	f.wg.Wait()
	for _, p := range f.ports {
		unix.Close(p.fd)
	}
}

// read takes the frames the namespace behind p sends and queues each on its link.
func (f *Forwarder) read(p *Port) {
	defer f.wg.Done()
	buf := make([]byte, 65536)
	for !f.stop.Load() {
		n, from, err := unix.Recvfrom(p.fd, buf, 0)
		if err != nil {
			if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
				continue
			}
			return
		}
		if ll, ok := from.(*unix.SockaddrLinklayer); ok && ll.Pkttype == unix.PACKET_OUTGOING {
			continue // a frame we wrote to this port
		}
		if n < 34 || binary.BigEndian.Uint16(buf[12:14]) != 0x0800 {
			continue // IPv4 only; neighbours are static, so no ARP
		}
		dst, ok := f.byIP[netip.AddrFrom4([4]byte(buf[30:34]))]
		if !ok || dst == p {
			continue
		}
		p.SentBytes.Add(uint64(n))
		p.SentPkts.Add(1)
		f.queue(p, dst, append([]byte(nil), buf[:n]...))
	}
}

func (f *Forwarder) queue(src, dst *Port, data []byte) {
	if f.model.Loss > 0 && rand.Float64() < f.model.Loss {
		f.dropped.Add(1)
		return
	}
	d := f.model.Delay(src, dst)
	if f.model.Jitter > 0 {
		d += time.Duration(float64(d) * f.model.Jitter * (2*rand.Float64() - 1))
	}
	f.mu.Lock()
	if f.cut != nil && f.cut(src, dst) {
		f.mu.Unlock()
		f.cutPkts.Add(1)
		return
	}
	if f.links == nil {
		f.mu.Unlock()
		return
	}
	key := [2]*Port{src, dst}
	q := f.links[key]
	if q == nil {
		q = make(chan frame, linkQueue)
		f.links[key] = q
		f.wg.Add(1)
		go f.deliver(dst, q)
	}
	select {
	case q <- frame{data, time.Now().Add(d)}:
	default:
		f.overrun.Add(1)
	}
	f.mu.Unlock()
}

// deliver writes a link's frames to dst in order, each at its time: a frame is never
// delivered before one sent earlier on the same link (jitter does not reorder a link, as
// on a real path), so each one waits for max(its time, the previous frame's).
func (f *Forwarder) deliver(dst *Port, q chan frame) {
	defer f.wg.Done()
	for fr := range q {
		if w := time.Until(fr.at); w > 0 {
			time.Sleep(w)
		}
		if f.stop.Load() {
			continue
		}
		if err := unix.Sendto(dst.fd, fr.data, 0, &unix.SockaddrLinklayer{Ifindex: dst.ifidx}); err == nil {
			dst.RecvBytes.Add(uint64(len(fr.data)))
			dst.RecvPkts.Add(1)
		}
	}
}
