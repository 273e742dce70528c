// Package remotewritetb is the testbench of the firmware tutorial's example
// (docs/firmware-tutorial.md): it builds nodes of the PPro platform (a
// PCI bus, host memory behind its bridge, a CPU and a LANai card, by
// lcitb.BuildHardware) with the firmware/remotewrite control program on
// every card, on the LCI paper's 64-host Myrinet grid, and runs one-sided
// remote writes on them (Write, OneWay). The host side of the example
// (Node.Post: a descriptor store into the card's ring; Node.Counter: the
// completion counter) lives here too, as the example has no host library
// of its own.
package remotewritetb
