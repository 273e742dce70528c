package lci

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// Variant is how the host moves send data into the NI.
type Variant uint8

// Variants (Table II).
const (
	// SDMA is the base implementation I-sdma: the host copies the data into
	// a host-resident packet queue and the NI fetches it by DMA (MY-P32).
	SDMA Variant = iota
	// PIO is I-pio: the host writes the data into the NI send buffer by
	// programmed I/O (section 5.2.1); everything else as I-sdma.
	PIO
)

func (v Variant) String() string {
	switch v {
	case PIO:
		return "I-pio"
	case RCPY:
		return "I-rcpy"
	}
	return "I-sdma"
}

// ParseVariant reads "sdma" or "pio" (with or without the "I-").
func ParseVariant(s string) (Variant, error) {
	switch s {
	case "sdma", "I-sdma":
		return SDMA, nil
	case "pio", "I-pio":
		return PIO, nil
	}
	return 0, fmt.Errorf("unknown LCI variant %q (have sdma, pio)", s)
}

// Reliability is who recovers lost, corrupted and dropped packets
// (Table II's reliability dimension, section 5.1).
type Reliability uint8

// Reliability choices.
const (
	// NoRetransmit is the base implementation's: «It assumes reliable
	// network hardware with FIFO communication paths. The implementation
	// therefore never retransmits» (section 4).
	NoRetransmit Reliability = iota
	// NIRetransmit is I-nirx: «the NI runs the retransmission protocol»
	// (section 5.1.2), go-back-N per pair of NIs.
	NIRetransmit
	// HostRetransmit is I-hrx: the same protocol run by the host library
	// (section 5.1.1).
	HostRetransmit
)

func (r Reliability) String() string {
	switch r {
	case NIRetransmit:
		return "nirx"
	case HostRetransmit:
		return "hrx"
	}
	return "none"
}

// MaxRxWindow is the largest go-back-N window the retransmitting
// variants' 8-bit sequence numbers allow: derived: a receiver must tell a
// retransmitted packet it already has from a new one, so the window must
// be at most half the 256 sequence numbers, less one.
const MaxRxWindow = 127

// ParseImplementation reads an implementation's name as Table II gives
// it, without its MTU: sdma, pio, nirx or hrx (with or without the "I-";
// I-nirx and I-hrx use I-sdma's DMA transfer).
func ParseImplementation(s string) (Variant, Reliability, error) {
	switch strings.TrimPrefix(s, "I-") {
	case "sdma":
		return SDMA, NoRetransmit, nil
	case "pio":
		return PIO, NoRetransmit, nil
	case "nirx":
		return SDMA, NIRetransmit, nil
	case "hrx":
		return SDMA, HostRetransmit, nil
	case "rcpy":
		return RCPY, NoRetransmit, nil
	}
	return 0, 0, fmt.Errorf("unknown LCI implementation %q (have sdma, pio, nirx, hrx, rcpy)", s)
}

// Tree is a multicast spanning-tree shape.
type Tree uint8

// Trees (section 5.4).
const (
	// Binary trees have a fan-out of 2 at every node («we by default use
	// binary forwarding trees», MY-P37).
	Binary Tree = iota
	// Binomial trees have a larger fan-out near the root («On 64 nodes
	// the top-level fan-out increases from 2 to 6», MY-P38).
	Binomial
)

func (t Tree) String() string {
	if t == Binomial {
		return "binomial"
	}
	return "binary"
}

// ParseTree reads "binary" or "binomial".
func ParseTree(s string) (Tree, error) {
	switch s {
	case "binary":
		return Binary, nil
	case "binomial":
		return Binomial, nil
	}
	return 0, fmt.Errorf("unknown multicast tree %q (have binary, binomial)", s)
}

// Children returns node's children in the tree rooted at root over n
// nodes (ranks are node numbers relative to the root).
func (t Tree) Children(root, node, n int) []int {
	r := (node - root + n) % n
	var out []int
	switch t {
	case Binary:
		for _, c := range []int{2*r + 1, 2*r + 2} {
			if c < n {
				out = append(out, (c+root)%n)
			}
		}
	case Binomial:
		// Rank r's children are r + 2^k for every 2^k above r's highest
		// set bit (the root, rank 0, has log2 n children).
		low := 1
		for low <= r {
			low <<= 1
		}
		for k := low; r+k < n; k <<= 1 {
			out = append(out, (r+k+root)%n)
		}
	}
	return out
}

// Packet types (the first byte of every LCI packet header).
const (
	TypeData  = 1 // unicast data
	TypeMcast = 2 // multicast data, forwarded along the tree
	TypeFAReq = 3 // fetch-and-add request
	TypeFARep = 4 // fetch-and-add reply
	TypeAck   = 5 // explicit half-window acknowledgment
	// TypeCompl marks a send completion in the host receive queue (it
	// never travels on the network).
	TypeCompl = 6
	// TypeNack is the retransmitting variants' retransmission request: an
	// acknowledgment (HdrAck) asking the sender to resend everything after
	// it at once, sent when receive buffers are free again after a packet
	// was dropped for want of one («the NI requests retransmissions from
	// the sender as soon as buffers become available again», section
	// 5.1.2).
	TypeNack = 7
)

// HdrAck is the header flag (Header.Flags) of a retransmitting variant's
// packet that carries an acknowledgment: RxAck(Credits) is the sequence of
// the last packet received in order from the destination.
const HdrAck = 1

// HeaderBytes is the size of the NI packet header and of the header of a
// host receive slot.
const HeaderBytes = 16

// Header is the LCI packet header as it sits at the start of every NI
// packet buffer and travels on the wire:
//
//	[0] type  [1] source node  [2:4] payload length  [4:6] credits (in
//	the retransmitting variants [4] the acknowledged sequence, [5] the
//	packet's own; RxFields)  [6] multicast root  [7] flags (HdrAck; 0 in
//	the base implementation)  [8:12] sequence (per source and
//	destination for data, per root for multicasts; an F&A request carries
//	the last data sequence and its reply echoes it: it means nothing
//	there)  [12:16] argument: the sender's tag; in an F&A request the
//	addend (the request has no payload), in its reply the variable's old
//	value
type Header struct {
	Type    uint8
	Src     uint8
	Len     uint16
	Credits uint16
	Root    uint8
	Flags   uint8
	Seq     uint32
	Arg     uint32
}

// RxFields packs a retransmitting variant's acknowledged sequence and
// packet sequence (each modulo 256) into the credits field.
func RxFields(ack, seq uint8) uint16 { return uint16(ack) | uint16(seq)<<8 }

// RxAck and RxSeq unpack them.
func RxAck(credits uint16) uint8 { return uint8(credits) }

// RxSeq returns the packet sequence packed by RxFields.
func RxSeq(credits uint16) uint8 { return uint8(credits >> 8) }

// Encode returns the header's bytes.
func (h Header) Encode() []byte {
	b := make([]byte, HeaderBytes)
	b[0], b[1] = h.Type, h.Src
	binary.LittleEndian.PutUint16(b[2:], h.Len)
	binary.LittleEndian.PutUint16(b[4:], h.Credits)
	b[6], b[7] = h.Root, h.Flags
	binary.LittleEndian.PutUint32(b[8:], h.Seq)
	binary.LittleEndian.PutUint32(b[12:], h.Arg)
	return b
}

// DecodeHeader reads a header.
func DecodeHeader(b []byte) Header {
	return Header{Type: b[0], Src: b[1], Len: binary.LittleEndian.Uint16(b[2:]), Credits: binary.LittleEndian.Uint16(b[4:]),
		Root: b[6], Flags: b[7], Seq: binary.LittleEndian.Uint32(b[8:]), Arg: binary.LittleEndian.Uint32(b[12:])}
}

// DescBytes is the size of a send descriptor.
const DescBytes = 32

// Desc is a send descriptor, written by the host into the send queue in
// NI memory («it writes an address and size field ... and enqueues a Send
// Descriptor in NI memory, which triggers the send», section 4.1), or by
// the Multicast module into the NI's own send queue (Layout.FwdQ: «creates
// a new Send Descriptor for each forwarding destination. These
// descriptors are enqueued just like send descriptors created by the host
// for unicast packets», section 4.2). The host address of an I-sdma
// packet's data is not in it: it is the send buffer's Fetch field.
//
//	[0:4] with DescHostFwd, the root's multicast sequence  [4:8] in I-hrx
//	the packet header's credits field, root and flags the host library
//	fills in (Desc.HCredits, HRoot, HFlags: the host runs the protocol,
//	section 5.1.1)  [8] type  [9] destination  [10:12] length
//	[12:16] NI send buffer (a receive buffer with DescFwd)
//	[16:20] sender's tag; in an F&A request the addend, with length 0:
//	the request carries no data, so the NI builds it from the
//	descriptor alone and no host DMA (I-sdma) or PIO of data (I-pio)
//	precedes it  [20] flags (DescFwd, the NI's own; DescHostFwd, or 0,
//	from the host)  [21:24] with DescHostFwd: the multicast's root, the
//	number of children the send buffer goes to, this descriptor's index
//	among them  [24:28] in I-hrx the packet header's sequence (Desc.HSeq)
//	[28:32] sequence (the n-th descriptor written to the ring, from 1)
//
// The sequence is the slot's valid mark and comes last: the host's
// write-combined burst writes ascending addresses, so a control program
// that sees the mark sees the whole descriptor (the mark first would let
// it read a half-written slot).
type Desc struct {
	Seq   uint32
	Type  uint8
	Dst   uint8
	Len   uint16
	Buf   uint32
	Tag   uint32
	Flags uint8
	// Root, RootSeq, Kids and Index are a host forward's (DescHostFwd):
	// the multicast's root and its sequence, which the packet keeps
	// («keep header Root/Seq/Arg»), how many children the send buffer
	// goes to (its send completion comes after the last) and which of
	// them this descriptor is (index 0 brings the data in).
	Root    uint8
	RootSeq uint32
	Kids    uint8
	Index   uint8
	// I-hrx only (zero in the other variants): the header's sequence,
	// credits field (RxFields), root and flags (HdrAck) as the host
	// library's protocol sets them.
	HSeq     uint32
	HCredits uint16
	HRoot    uint8
	HFlags   uint8
}

// DescFwd marks a descriptor the Multicast module made to forward a
// multicast packet to one child: its buffer is the NI receive buffer the
// packet arrived in, whose header is in place, so nothing is fetched.
const DescFwd = 1

const DescHostFwd = 2

// DescResend marks an I-hrx descriptor whose data is in its NI send
// buffer already (a retransmission, or the second and later children of
// a host-level multicast sharing one buffer): the NI «resends buffers on
// command» and fetches nothing.
const DescResend = 4

// Encode returns the descriptor's bytes.
func (d Desc) Encode() []byte {
	b := make([]byte, DescBytes)
	binary.LittleEndian.PutUint32(b[0:], d.RootSeq)
	binary.LittleEndian.PutUint16(b[4:], d.HCredits)
	b[6], b[7] = d.HRoot, d.HFlags
	binary.LittleEndian.PutUint32(b[24:], d.HSeq)
	b[8], b[9] = d.Type, d.Dst
	binary.LittleEndian.PutUint16(b[10:], d.Len)
	binary.LittleEndian.PutUint32(b[12:], d.Buf)
	binary.LittleEndian.PutUint32(b[16:], d.Tag)
	b[20], b[21], b[22], b[23] = d.Flags, d.Root, d.Kids, d.Index
	binary.LittleEndian.PutUint32(b[28:], d.Seq)
	return b
}

// DecodeDesc reads a descriptor.
func DecodeDesc(b []byte) Desc {
	return Desc{Type: b[8], Dst: b[9], Len: binary.LittleEndian.Uint16(b[10:]),
		Buf: binary.LittleEndian.Uint32(b[12:]), Tag: binary.LittleEndian.Uint32(b[16:]), Flags: b[20], Seq: binary.LittleEndian.Uint32(b[28:]),
		Root: b[21], Kids: b[22], Index: b[23], RootSeq: binary.LittleEndian.Uint32(b[0:]),
		HSeq: binary.LittleEndian.Uint32(b[24:]), HCredits: binary.LittleEndian.Uint16(b[4:]), HRoot: b[6], HFlags: b[7]}
}

// FetchBytes is the size of an I-sdma send buffer's address and size
// field.
const FetchBytes = 8

// Fetch is the address and size field of an I-sdma send: «a user process
// allocates a free, NI-resident Send Buffer (see Figure 4), and it writes
// an address and size field, instructing the NI to transfer the user data
// to the buffer using DMA» (section 4.1). The host writes it by PIO into
// the first FetchBytes of the send buffer (the header space, where the
// control program writes the packet header once the data is in), before
// the descriptor; Host Send Queue Mgt reads it there when it finds the
// descriptor:
//
//	[0:4] host bus address of the data  [4:8] size in bytes
//
// derived: 32-bit fields: the hosts' bus addresses are 32 bits (Table I's
// PCI buses; host memory and the card's window are below 4 GB).
type Fetch struct {
	Addr uint32
	Len  uint32
}

// Encode returns the field's bytes.
func (f Fetch) Encode() []byte {
	b := make([]byte, FetchBytes)
	binary.LittleEndian.PutUint32(b[0:], f.Addr)
	binary.LittleEndian.PutUint32(b[4:], f.Len)
	return b
}

// DecodeFetch reads the field.
func DecodeFetch(b []byte) Fetch {
	return Fetch{Addr: binary.LittleEndian.Uint32(b[0:]), Len: binary.LittleEndian.Uint32(b[4:])}
}

// FreeBytes is the size of a free host buffer record.
const FreeBytes = 16

// Free is a free host receive buffer, written by the host into the Recv
// Completions queue in NI memory («writes the buffers' addresses into a
// Recv Completions queue in NI memory», section 4.1): [0:8] host address
// of the slot, [12:16] sequence (the valid mark, last, as in Desc).
type Free struct {
	Seq  uint32
	Addr uint64
}

// Encode returns the record's bytes.
func (f Free) Encode() []byte {
	b := make([]byte, FreeBytes)
	binary.LittleEndian.PutUint64(b[0:], f.Addr)
	binary.LittleEndian.PutUint32(b[12:], f.Seq)
	return b
}

// DecodeFree reads a record.
func DecodeFree(b []byte) Free {
	return Free{Addr: binary.LittleEndian.Uint64(b[0:]), Seq: binary.LittleEndian.Uint32(b[12:])}
}

// Host receive slots. A slot is the data area followed by a 16-byte slot
// header; a packet of n bytes is stored so that its data ends where the
// header begins, and data and header go in one DMA, so the header's last
// word, the full flag, is the last thing written:
//
//	[0] type  [1] source  [2:4] length  [4:8] tag  [8:12] argument
//	[12:16] full flag: the delivery number (1, 2, ...)
//
// The header sits SlotInlineBytes into a SlotLineBytes-aligned block
// (SlotHeaderAt), so that a packet of up to SlotInlineBytes bytes and its
// header fill that one block: with the P6's 32-byte cache line the poll
// that finds the flag fills the line that holds the data too, and a
// 16-byte message costs the host one cache miss, not two (the data in the
// line before the header's). The arithmetic, for the 2 KB MTU: the slot
// starts on a 64-byte boundary (SlotBytes is a multiple of 64); the
// header is at roundup(2048, 32) + 16 = 2064, which is 16 bytes into the
// line [2048, 2080); a 16-byte message's data is [2048, 2064), the same
// line; the slot is 2064 + 16 = 2080 bytes, 2112 rounded up to 64 (as
// before this layout: the MTU's data area followed by the header was 2064
// bytes, also 2112). A message of n > 16 bytes starts n - 16 bytes before
// that line and spans ceil((n - 16) / 32) lines more.
//
// A send completion is a slot with no data, type TypeCompl and the NI send
// buffer that is free again as its tag: «Send completions are reported
// back via a DMA to the host receive queue» (section 4.1).
type SlotHeader struct {
	Type uint8
	Src  uint8
	Len  uint16
	Tag  uint32
	Arg  uint32
	Flag uint32
}

// Encode returns the slot header's bytes.
func (h SlotHeader) Encode() []byte {
	b := make([]byte, HeaderBytes)
	b[0], b[1] = h.Type, h.Src
	binary.LittleEndian.PutUint16(b[2:], h.Len)
	binary.LittleEndian.PutUint32(b[4:], h.Tag)
	binary.LittleEndian.PutUint32(b[8:], h.Arg)
	binary.LittleEndian.PutUint32(b[12:], h.Flag)
	return b
}

// DecodeSlotHeader reads a slot header.
func DecodeSlotHeader(b []byte) SlotHeader {
	return SlotHeader{Type: b[0], Src: b[1], Len: binary.LittleEndian.Uint16(b[2:]), Tag: binary.LittleEndian.Uint32(b[4:]),
		Arg: binary.LittleEndian.Uint32(b[8:]), Flag: binary.LittleEndian.Uint32(b[12:])}
}

// SlotLineBytes is the block a host receive slot's header is placed in
// with the smallest messages' data: assumed: 32 bytes, the cache line of
// both hosts (host/platform's PPro and P3: the P6 family's 32-byte line).
// SlotInlineBytes is the data that shares it with the header: derived:
// 32 - 16 = 16 bytes, the «16-byte messages» of Tables III and IV.
const (
	SlotLineBytes   = 32
	SlotInlineBytes = SlotLineBytes - HeaderBytes
)

// SlotHeaderAt is the offset of the slot header in a host receive slot
// for an MTU of mtu: derived: the MTU rounded up to SlotLineBytes plus
// SlotInlineBytes (2064 for 2048), so that the header is SlotInlineBytes
// into a SlotLineBytes block and at least mtu bytes of data fit before
// it. A packet of n bytes is stored at SlotHeaderAt - n.
func SlotHeaderAt(mtu int) int {
	return (mtu+SlotLineBytes-1)/SlotLineBytes*SlotLineBytes + SlotInlineBytes
}

// SlotBytes is the size of a host receive slot for an MTU of mtu: the
// header's end rounded up to 64 bytes (2112 for 2048), so that every slot
// of a contiguous array starts on a line (and a SlotLineBytes) boundary.
func SlotBytes(mtu int) int { return (SlotHeaderAt(mtu) + HeaderBytes + 63) &^ 63 }

// Layout is where the control program keeps things in SRAM, and what the
// host library must know of it.
type Layout struct {
	// SendQ is the send descriptor ring (SendQSlots descriptors).
	SendQ      uint32
	SendQSlots int
	// FreeQ is the Recv Completions ring of free host buffers.
	FreeQ      uint32
	FreeQSlots int
	// SendBufs are the NI send buffers, Bufs bytes apart; data starts
	// HeaderBytes into a buffer.
	SendBufs  uint32
	NSendBufs int
	// RecvBufs are the NI receive buffers.
	RecvBufs  uint32
	NRecvBufs int
	// FwdQ is the NI's own send descriptor ring (FwdQSlots descriptors):
	// the Multicast module enqueues a descriptor per child there and Host
	// Send Queue Mgt takes them in its next pass. It comes last so that
	// the host's rings and the buffers sit where they did before it.
	FwdQ      uint32
	FwdQSlots int
	// Fwd is the multicast forwarding table the host writes at
	// initialisation: for each root, FwdWidth child node numbers (0xff:
	// none).
	Fwd uint32
	// Ctl are small buffers for acknowledgments and F&A replies.
	Ctl  uint32
	NCtl int
	// Buf is the size of a packet buffer: header, MTU, and room for the
	// host slot header behind the data.
	Buf uint32
	// Compl (I-hrx only, after everything else; 0 otherwise) stages the
	// slot headers of send completions, one per host receive slot, taken
	// in the order of the Recv Completions records: at most HostSlots
	// deliveries are outstanding, so a staged header is DMAed before its
	// place is used again. (The other variants stage a completion in its
	// send buffer's header space; in I-hrx the buffer may be sent again,
	// and complete again, before the first completion's DMA.)
	Compl uint32
	// NTLB (I-rcpy only, after everything else; 0 otherwise) is the NI
	// TLB, NTLBEntries entries of NTLBEntryBytes (rcpy.go).
	NTLB uint32
	// End is the first byte the layout does not use.
	End uint32
}

// SendBuf returns the SRAM address of send buffer i.
func (l Layout) SendBuf(i int) uint32 { return l.SendBufs + uint32(i)*l.Buf }

// RecvBuf returns the SRAM address of receive buffer i.
func (l Layout) RecvBuf(i int) uint32 { return l.RecvBufs + uint32(i)*l.Buf }

// CtlBuf returns the SRAM address of control buffer i.
func (l Layout) CtlBuf(i int) uint32 { return l.Ctl + uint32(i)*2*HeaderBytes }

// NewLayout lays out SRAM for the configuration.
func NewLayout(c Config) Layout {
	l := Layout{SendQSlots: c.SendQSlots, FreeQSlots: c.HostSlots, NSendBufs: c.SendBufs, NRecvBufs: c.RecvBufs, NCtl: ctlBufs}
	l.Buf = uint32(c.MTU + 2*HeaderBytes)
	l.Fwd = CtlFwd
	at := (CtlFwd + uint32(c.ClusterSize*FwdWidth) + 63) &^ 63
	l.SendQ = at
	at += uint32(c.SendQSlots * DescBytes)
	l.FreeQ = at
	at += uint32(c.HostSlots * FreeBytes)
	l.Ctl = at
	at += uint32(ctlBufs * 2 * HeaderBytes)
	at = (at + 63) &^ 63
	l.SendBufs = at
	at += uint32(c.SendBufs) * l.Buf
	l.RecvBufs = at
	at += uint32(c.RecvBufs) * l.Buf
	l.FwdQ, l.FwdQSlots = at, FwdQSlots
	at += FwdQSlots * DescBytes
	if c.Reliability == HostRetransmit {
		l.Compl = at
		at += uint32(c.HostSlots * HeaderBytes)
	}
	if c.Variant == RCPY {
		l.NTLB = at
		at += NTLBBytes
	}
	l.End = at
	return l
}

// The control block at the start of SRAM, written by the host at
// initialisation.
const (
	// CtlFlags: bit 0 enables network interrupts.
	CtlFlags = 0x0c
	// CtlFwd is where the forwarding table starts.
	CtlFwd = 0x40
	// FwdWidth is the most children a node has in one tree.
	FwdWidth = 8
)

// FwdQSlots is the size of the NI's own send descriptor ring. One
// multicast packet makes at most FwdWidth descriptors. Descriptors are
// left in the ring after a handler only when it started the send engine,
// so while any are left the engine is busy, and a handler that finds the
// engine busy takes every descriptor (its passes start no send); a
// handler that adds a packet's descriptors to those left (at most
// FwdWidth - 1, the first child's having gone) takes them all before it
// ends. So the ring never holds more than 2*FwdWidth - 1.
const FwdQSlots = 2 * FwdWidth

// ctlBufs is the number of control buffers: enough for the acks and F&A
// replies waiting for the send engine.
const ctlBufs = 64
