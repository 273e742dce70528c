// Package tgtb is the Telegraphos testbench: it assembles whole systems
// out of the board (hib/telegraphos), the host hardware (host/cpu, rtl/bus,
// rtl/mem) and the Telegraphos switch (switch/wormhole), and drives the
// paper's measurements on them (telegraphos.txt section 3.2).
//
// A cluster (BuildCluster) is DEC 3000 model 300 workstations, each a
// processor on a TURBOchannel with a HIB and its shared memory, linked to
// one Telegraphos switch, with checkers that every packet is delivered
// once and each message class in order (TG-P5). MeasureBasics runs the
// remote write, remote read and 100-write stream of section 3.2. Host
// programs (host/tglib) run on the nodes' processors; scenarios
// (verify/scenario/tgscen) and the regression tier use this package.
package tgtb
