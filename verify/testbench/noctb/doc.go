// Package noctb is the testbench of nisim's networks on their own, with
// traffic endpoints in place of hosts and boards: the wormhole mesh and
// irregular graphs of wormhole routers (switch/wormhole, BookSim's
// iq_router), the LCI paper's two Myrinet clusters (switch/myrinet: the
// PPro grid and the P3 Clos, lci-myrinet-cluster-protocols.txt section 5.1),
// the FORE ASX-100 cell switch (switch/atm, atm-remote-memory-access.txt
// section 2.2) and the first-generation Memory Channel hub (switch/mchub,
// cashmere-2l-memory-channel.txt section 2.1).
//
// Each system has a builder and a measurement driver that runs it through
// warm-up, measurement and drain with every checker on and returns what it
// built and measured: BuildNet and RunNet (terminals on a mesh, a graph or
// a Myrinet cluster, switch/fabric's Experiment), RunATM (an endpoint per
// port of the cell switch) and RunMC (an adapter per port of the hub). The
// network scenarios (verify/scenario/noc) turn their parameters into these
// configurations and write the reports; the regression tier runs them
// through the scenarios.
package noctb
