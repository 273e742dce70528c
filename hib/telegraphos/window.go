package telegraphos

import "encoding/binary"

// Addr returns the processor's physical address of word off of node's
// shared memory, in the HIB's window at WindowBase (2.2.1).
func Addr(node int, off uint32) uint64 { return WindowBase + uint64(SharedAddr(node, off)) }

// RegAddr returns the processor's physical address of special register
// reg.
func RegAddr(reg uint32) uint64 { return WindowBase + uint64(SpecialAddr(reg)) }

// Word encodes v as a store's data.
func Word(v uint32) []byte {
	var b [WordBytes]byte
	binary.LittleEndian.PutUint32(b[:], v)
	return b[:]
}
