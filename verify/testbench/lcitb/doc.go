// Package lcitb is the LANai + LCI testbench
// (lci-myrinet-cluster-protocols.txt): it assembles whole systems out of
// the host hardware (host/platform's PPro or P3 built from host/cpu, a
// host/memsys cache, an rtl/bus memory bus with rtl/mem host memory, an
// rtl/bus PCI host bridge and PCI), the LANai card (lanai)
// running the LCI control program (firmware/lci), the LCI host library
// (host/lcilib) and the Myrinet grid or Clos network (switch/topology), on
// the PPro or P3 platform of Table I, and drives the paper's measurements
// on them.
//
// BuildHardware builds one node's hardware with any firmware.Program on
// its card (the firmware tutorial's testbench reuses it); Build builds an
// LCI cluster. The drivers are LogP (PingPong, Stream, FetchAdd,
// MeasureLogP: section 5.1.3, Tables III and IV), broadcasts (Broadcast,
// BroadcastStream: section 5.4) and randomised traffic with checkers
// (RunTraffic). Scenarios (verify/scenario/lciscen) and the regression tier
// use this package.
package lcitb
