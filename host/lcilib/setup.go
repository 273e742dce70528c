package lcilib

import (
	"github.com/nisim/nisim/firmware/lci"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/mem"
)

// NewHost returns node's library (of a cluster of nodes), named name, on
// the platform plat, with the library's costs and the control program's
// configuration fw, running on the processor c with host memory m: it
// watches m for writes (the NI's DMA landing behind the bridge) to wake a
// polling c; c reads received slots with loads through its cache, which
// miss on the lines the DMA wrote. A
// testbench (verify/testbench/lcitb) builds the node's hardware first and
// calls Init once the card's SRAM exists.
func NewHost(e *env.Env, name string, node, nodes int, plat Platform, costs Costs, fw lci.Config, c *cpu.CPU, m *mem.Memory) *Host {
	return newHost(e, name, node, nodes, plat, costs, fw, c, m)
}

// Init writes what the host sets up in the card's SRAM before the first
// message (untimed, as at process start): the control block, the free
// host buffers and the multicast forwarding table of tree.
func (h *Host) Init(sram *mem.Storage, tree lci.Tree) error { return h.init(sram, tree) }

// Report reports a violation of rule by this host's library at now (a
// testbench's checks on what the library delivered).
func (h *Host) Report(now clock.Time, rule, format string, args ...any) {
	h.env.Report(now, h.name, rule, format, args...)
}

// CopyCycles returns the processor cycles memcpy of n bytes takes: within
// the caches, or at the platform's memory copy rate when the data does
// not fit in L2 (big).
func (h *Host) CopyCycles(n int, big bool) int { return h.copyCycles(n, big) }
