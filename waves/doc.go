// Package waves is nisim's waveform layer: a registry of signals that
// components declare and update on value changes, a streaming VCD writer
// (IEEE 1364-2005 section 18, 1 ps timescale, GTKWave's string extension),
// selection of scopes and signals by glob and of a time window, and an
// in-memory history that lets a failing test dump the cycles leading up to
// the failure. The strict reader and linter are in waves/vcd.
//
// A component asks the registry for its signals when it is built:
//
//	b.state = reg.String(name, "state")
//	b.occ = reg.Integer(name, "occupancy", waves.WidthFor(depth))
//
// and reports changes as they happen:
//
//	b.state.SetString(now, "DATA")
//
// With no registry, or a registry whose selection leaves a signal out, the
// signal is nil and each update costs one nil check.
//
// # Signal names
//
// Every board names its waveforms the same way, so that a signal list, a
// --select pattern or a GTKWave save file written for one board reads the
// same on the next. [CheckName] enforces the mechanical part of these rules
// and the registry refuses a declaration that breaks them, selected or not
// (Registry.Err names the signal and the rule, and the run fails), as well
// as a name that is both a scope and a signal, so a new board cannot drift.
//
// Components keep the names Akita requires of them (capitalised CamelCase,
// bracketed indices: sim.NameMustBeValid), and their trace records carry
// those; the registry converts every declared name with [ScopeName]
// (N0.NI.SRAM becomes n0.ni.sram, Host.Bus.Master[0] host.bus.master0,
// NI.TxFifo ni.tx_fifo, Graph.Link[3][4] graph.link3_4). Lookup and the
// dump use the converted names; Select and Exclude patterns are converted
// the same way, so --select N0.NI.SDMA and --select n0.ni.sdma are one
// selection. A builder therefore
// names its parts in CamelCase that converts to the words below (HDMA,
// TxFifo, FW, LinkX[3]); a signal's own name is written in the convention.
//
//   - A name is a dot-separated path: the scopes are the hierarchy of the
//     hardware, system or node first, then board, then block, and the last
//     part is the signal: n0.ni.sram.addr, host.bus.master,
//     mesh.router12.flits_out.
//   - One case style: every part is lower case ASCII letters and digits,
//     starting with a letter; a multiword part is snake_case (tx_fifo,
//     reads_out, fill_addr). No brackets, dashes or upper case.
//   - An instance index is appended to its word: n0, port1, master2, tx0,
//     credits3, router12. A second index follows an underscore: link3_4
//     (the link between nodes 3 and 4), link_up1_2.
//   - Nodes of a cluster are n0, n1, ...; a host's parts sit under its node
//     (n0.cpu, n0.cache, n0.mem_bus, n0.pci, n0.bridge), its network
//     interface under n0.ni, and the interface's blocks under that
//     (n0.ni.sram, n0.ni.hdma, n0.ni.cpu). A single-host system with no
//     node index uses host and ni in its place (the demo: host.cpu,
//     ni.sram), its far side remote.
//   - Firmware state machines run on the NI and sit under it, in the
//     scope fw (one control program per card): n0.ni.fw.tx.state for
//     LCI's transmit module, n0.ni.fw.send.state for the tutorial's
//     remote-write program. A part named fw anywhere else is refused.
//   - Networks are a top scope named after the network (mesh, graph, myri
//     for the Myrinet scenarios, net for an LCI cluster's Myrinet, atm, mc
//     for the Memory Channel hub) holding routers (router<i>), switches
//     (switch<i>), links (link_x<i>, link_y<i>, link_z<i> between
//     neighbours, link_t<i> to a terminal, link_h<i> to a host,
//     link_up<l>_<s> between Clos levels, link<a>_<b> on a graph) and
//     endpoints (host<i>, adapter<i>). A link's two directions are ab and
//     ba, with per-virtual-channel buffers tx<vc> and rx<vc>. Traffic
//     terminals (T[i], H[i]) declare no signals; they keep their short
//     Akita names because a component's name seeds its random stream
//     (env.Rand), and renaming one would change the traffic.
//   - Abbreviations come from one fixed list and are always used in place
//     of their long form ([Abbreviations], [MultiwordAbbreviations]): addr
//     (address), cpu (processor), ctl (control), dma, fc (flow control),
//     fifo, fw (firmware), hdma, sdma, rdma (the host, send and receive DMA
//     engines of an NI), hib (Telegraphos host interface board), irq
//     (interrupt line), mc (Memory Channel; as an LCI firmware module, the
//     paper's multicast module), mem (memory), myri (Myrinet), ni (network
//     interface), pci, rx, tx (receive, transmit), sram, srv (server), tc
//     (TURBOchannel), vc (virtual channel), wdata, rdata (write and read
//     data), cpl (completion), hwm (high-water mark). Other words are
//     spelled out (switch, router, bridge, cache, queue, doorbell).
//   - Counters are plural nouns saying what they count (hits, misses,
//     drops, interrupts, bad_headers, cells_sent); levels name the
//     quantity (occupancy, staged, queued, in_flight, outstanding,
//     events_pending); flags are adjectives or states (full, busy, stop,
//     irq).
//   - A value that encodes something other than a number is either a
//     string signal carrying the name itself (bus master and target: the
//     port's name, "-" when idle; a switch output's owner: the input's
//     name, "-" when free; FSM states) or documented in the comment of the
//     declaration that creates it. Address signals are as wide as the bus
//     or memory they belong to, never a blanket 64: a bus's addr is
//     bus.Builder.WithAddrBits wide (32 on PCI, TURBOchannel and EISA), a
//     memory's addr has the bits of its size (20 for the LANai's 1 MiB
//     SRAM), a cache's fill_addr those of its memory bus.
//
// The list of names each board dumps, before and after this convention,
// is kept in the project notes (wave-names.md); GTKWave save files and
// default selections key on these names.
package waves
