// Package telegraphos models the Telegraphos host interface board (HIB)
// of Markatos and Katevenis, «Telegraphos: High-Performance Networking for
// Parallel Processing on Workstation Clusters» (HPCA-2, 1996;
// shared/papers/telegraphos.txt). The board only: a cluster of DEC 3000
// model 300 workstations with HIBs on one Telegraphos switch, and the
// paper's measurements on it, are assembled in verify/testbench/tgtb.
//
// # The board
//
// The HIB plugs into the TURBOchannel (TG-P1) and is built of the blocks
// of the paper's Table 1, each a separate part of the model:
//
//   - the TURBOchannel interface: a bus target (Port) that latches a store
//     at once, which retires it for the processor (posted, TG-P10), and
//     holds a load until its data is ready (TG-P11);
//   - the central control: three state machines on the HIB clock (the
//     TURBOchannel's), each working through its job a step at a time, its
//     current step a waveform string: the processor side (.Ctl) serves the
//     processor's accesses in order, the request server (.Srv) serves
//     requests from other nodes in arrival order, the response sink (.Sink)
//     takes responses, acknowledgements and reflected writes;
//   - the outgoing and incoming link interfaces, one per message class,
//     moving a packet's 4-byte words between the central control and the
//     link's FIFOs a word per cycle («2+2 Kb of synchr. (2-port) FIFO's»,
//     TG-P25/26: the link's transmit and receive FIFOs, 32 words per class
//     per direction);
//   - the atomic-operation unit (fetch-and-store, fetch-and-increment,
//     compare-and-swap at the home node, TG-P13), which holds the memory
//     for its read-modify-write;
//   - the multicast list (MapOut; 16 K entries, TG-P17), the page access
//     counters (SetPageCounters; 16-bit read and write counters per remote
//     page with an interrupt on the step from 1 to 0, TG-P15/16), the
//     outstanding-operation counter behind RegFence (MEMORY_BARRIER,
//     TG-P32), and the counter cache of the update protocol (a CAM of 16-32
//     pending-write counters, rtl/cam, TG-P21);
//   - the shared memory: the board's own 16 MB (Telegraphos I, TG-P18) or
//     host memory (Telegraphos II), a three-port memory, one port per state
//     machine.
//
// # Address map, operations and launch sequences
//
// See addr.go: the highest bits of a shared address name its node
// (TG-P8), a shadow address differs in the highest bit (TG-P9), contexts
// and special registers have regions of their own. A store or load to
// another node's word is a remote write or read; at most one read is
// outstanding (TG-P12). Special operations (atomics and the non-blocking
// remote copy) are launched by uncached stores followed by a read (TG-P14):
// on Telegraphos I a store of the operation to RegMode, the argument stores
// and a read of RegLaunch, run as uninterruptible PAL code; on Telegraphos
// II stores to the process's context, shadow stores carrying the context
// and its key, and a read of the context's CtxLaunch. A wrong key, a
// foreign context or an address outside the cluster is refused, counted
// and raises IntRefused; nothing else changes. host/tglib has these
// sequences as processor programs.
//
// # Packets and the switch
//
// Packets (packet.go) are a header word, an address word and data words.
// Requests (writes, reads, atomics, copies, updates to an owner) travel on
// the request class, responses (read and atomic results, copy data,
// acknowledgements, reflected writes) on the response class; each class is
// a virtual channel of the Telegraphos switch (switch/wormhole with VC
// classes), which routes deterministically and delivers each class in
// order from a source to a destination (TG-P5). A request causes at most
// responses and a response causes nothing, so the protocol cannot
// deadlock.
//
// # Update-based coherence (section 2.3)
//
// A replicated page has an owner (MapOut) and copies (SetReplica). A store
// to a copy is applied locally, counted in the counter cache and sent to
// the owner; the owner applies it and reflects it to every copy, its
// origin's included, in the order it applied it (the multicast unit is
// held from the write to its last reflection). A copy ignores its own
// reflected write and decrements the counter (rule 2), ignores other
// writes to a word with a pending counter (rule 3), applies the rest, and
// stalls the processor when the cache has no free entry. Without the cache
// (Telegraphos I) reflected writes are always applied; without owner
// ordering every copy multicasts its own writes: both reproduce the
// paper's inconsistencies, which the Coherence checker detects.
//
// # Timing
//
// Every latency comes from the parts' cycles: the processor's issue
// cycles, the TURBOchannel's transaction phases (rtl/bus), the HIB's
// decode and control cycles, the memory's latency, the link's byte rate
// and the switch's pipeline. Two parameters are calibrated, each to one of
// the paper's figures (section 3.2): the central control's cycles per
// packet to the remote write (0.70 µs per write of a long loop, the home
// HIB's pace) and the switch's traversal delay to the remote read (7.2
// µs). The stream of 100 writes (under 50 µs) is not fitted: it comes out
// at 46 µs from the buffering between the processor and the home HIB.
package telegraphos
