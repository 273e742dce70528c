package panda

// Fragments exposes the fragmentation to the specs.
func Fragments(mtu int, iov [][]byte, arg uint32) [][]byte {
	return (&Node{mtu: mtu}).fragments(iov, arg)
}
