package wormhole

import (
	"errors"
	"fmt"
)

// Config is a router's configuration. The keys are BookSim's (the
// long-standing open-source cycle-accurate NoC simulator), so that a
// standard configuration can be written down in nisim unchanged; the
// timing they produce follows BookSim's input-queued router (iq_router)
// stage by stage, see the package documentation.
type Config struct {
	// NumVCs and VCBufSize: virtual channels per port and flits per VC.
	NumVCs    int `toml:"num_vcs"`
	VCBufSize int `toml:"vc_buf_size"`
	// BufferPolicy is "private" (VCBufSize slots per VC) or "shared" (one
	// pool of BufSize slots per input port, used by all VCs: the
	// Telegraphos switch's shared central buffer).
	BufferPolicy string `toml:"buffer_policy"`
	BufSize      int    `toml:"buf_size"`
	// CreditDelay is the cycles a router takes to process a returned
	// credit, not counting the wire (BookSim's credit_delay).
	CreditDelay int `toml:"credit_delay"`
	// RoutingDelay is the route computation stage (0: lookahead routing,
	// the route at this router was computed by the previous one).
	RoutingDelay int `toml:"routing_delay"`
	// VCAllocDelay and SWAllocDelay are the allocation stages (>= 1).
	VCAllocDelay int `toml:"vc_alloc_delay"`
	SWAllocDelay int `toml:"sw_alloc_delay"`
	// STPrepareDelay + STFinalDelay is the switch traversal (>= 1).
	STPrepareDelay int `toml:"st_prepare_delay"`
	STFinalDelay   int `toml:"st_final_delay"`
	// Speculative lets a head bid for the switch in the cycle it bids for
	// an output VC; speculative bids lose to non-speculative ones.
	Speculative bool `toml:"speculative"`
	// InputSpeedup and OutputSpeedup: crossbar ports per router port.
	InputSpeedup  int `toml:"input_speedup"`
	OutputSpeedup int `toml:"output_speedup"`
	// VCAllocator and SWAllocator: "islip" or "separable_input_first".
	VCAllocator string `toml:"vc_allocator"`
	SWAllocator string `toml:"sw_allocator"`
	// WaitForTailCredit keeps an output VC busy until the credit of the
	// packet's tail has come back (the downstream VC is empty).
	WaitForTailCredit bool `toml:"wait_for_tail_credit"`
	// CutThrough selects virtual cut-through: a head is given an output
	// VC only when the downstream VC has room for the whole packet.
	CutThrough bool `toml:"vct"`
}

// Mesh88Lat returns the router of BookSim's examples/mesh88_lat: 8 VCs of
// 8 flits, credit delay 2, lookahead routing, 1-cycle VC and switch
// allocation and switch traversal, iSLIP allocators, input speedup 2.
func Mesh88Lat() Config {
	return Config{NumVCs: 8, VCBufSize: 8, BufferPolicy: "private", CreditDelay: 2,
		RoutingDelay: 0, VCAllocDelay: 1, SWAllocDelay: 1, STPrepareDelay: 0, STFinalDelay: 1,
		InputSpeedup: 2, OutputSpeedup: 1, VCAllocator: "islip", SWAllocator: "islip", WaitForTailCredit: true}
}

// Telegraphos returns the Telegraphos switch: «back-pressured flow control,
// deterministic routing, in-order delivery of packets, and deadlock
// freedom» (telegraphos.txt section 2.1, TG-P5), with a shared central
// buffer per port. The paper gives no buffer size or switch delay: the
// numbers are assumed (a small single-chip switch of 1996).
func Telegraphos() Config {
	return Config{
		NumVCs: 2, VCBufSize: 8, BufferPolicy: "shared", BufSize: 16, // assumed
		CreditDelay: 1, RoutingDelay: 1, VCAllocDelay: 1, SWAllocDelay: 1, STFinalDelay: 1, // assumed
		InputSpeedup: 1, OutputSpeedup: 1, VCAllocator: "separable_input_first", SWAllocator: "separable_input_first",
		WaitForTailCredit: true,
	}
}

// Validate checks the configuration; errors name the key.
func (c Config) Validate() error {
	switch {
	case c.NumVCs < 1 || c.NumVCs > 64:
		return fmt.Errorf("num_vcs: %d must be in 1..64", c.NumVCs)
	case c.BufferPolicy != "private" && c.BufferPolicy != "shared":
		return fmt.Errorf("buffer_policy: %q must be private or shared", c.BufferPolicy)
	case c.BufferPolicy == "private" && c.VCBufSize < 1:
		return fmt.Errorf("vc_buf_size: %d must be at least 1", c.VCBufSize)
	case c.BufferPolicy == "shared" && c.BufSize < 1:
		return fmt.Errorf("buf_size: %d must be at least 1 with a shared buffer", c.BufSize)
	case c.CreditDelay < 0:
		return fmt.Errorf("credit_delay: %d must not be negative", c.CreditDelay)
	case c.RoutingDelay < 0:
		return fmt.Errorf("routing_delay: %d must not be negative", c.RoutingDelay)
	case c.VCAllocDelay < 1:
		return fmt.Errorf("vc_alloc_delay: %d must be at least 1", c.VCAllocDelay)
	case c.SWAllocDelay < 1:
		return fmt.Errorf("sw_alloc_delay: %d must be at least 1", c.SWAllocDelay)
	case c.STPrepareDelay < 0 || c.STFinalDelay < 0 || c.STPrepareDelay+c.STFinalDelay < 1:
		return fmt.Errorf("st_final_delay: st_prepare_delay + st_final_delay must be at least 1, neither negative (got %d + %d)",
			c.STPrepareDelay, c.STFinalDelay)
	case c.InputSpeedup < 1 || c.InputSpeedup > c.NumVCs:
		return fmt.Errorf("input_speedup: %d must be in 1..num_vcs", c.InputSpeedup)
	case c.OutputSpeedup < 1 || c.OutputSpeedup > 64:
		// Input p uses output lane p mod output_speedup, so lanes beyond
		// the inputs stay unused, and the router sizes its switch
		// allocation by ports x speedups (10^5 took gigabytes).
		return fmt.Errorf("output_speedup: %d must be in 1..64", c.OutputSpeedup)
	case c.Speculative && (c.VCAllocDelay != 1 || c.SWAllocDelay != 1):
		return errors.New("speculative: needs vc_alloc_delay = sw_alloc_delay = 1")
	}
	for _, a := range []struct{ key, v string }{{"vc_allocator", c.VCAllocator}, {"sw_allocator", c.SWAllocator}} {
		if _, err := NewAllocator(a.v, 1, 1); err != nil {
			return fmt.Errorf("%s: %w", a.key, err)
		}
	}
	return nil
}

// BufferFlits is the receive buffer the links into this router need: per
// VC (private) or per port (shared).
func (c Config) BufferFlits() int {
	if c.BufferPolicy == "shared" {
		return c.BufSize
	}
	return c.VCBufSize
}
