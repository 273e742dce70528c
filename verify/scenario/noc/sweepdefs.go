package noc

import (
	"fmt"

	"github.com/nisim/nisim/verify/scenario"
)

// The metrics each network scenario measures, in Run's order, so that a
// sweep checks --y before it runs and labels its axes with these units
// (the spec "declares every metric it measures" keeps them in step).

// Metrics returns the metrics Run measures (hop_delay on the Myrinet
// networks only). The latency's reference line is the zero-load latency.
func (p *Params) Metrics() []scenario.MetricDef {
	var defs []scenario.MetricDef
	if !p.wormhole() {
		defs = append(defs, scenario.MetricDef{Name: "hop_delay", Unit: "ns"})
	}
	return append(defs, []scenario.MetricDef{
		{Name: "link_utilisation"}, {Name: "link_utilisation_max"},
		{Name: "packets", Unit: "measured"}, {Name: "dropped", Unit: "measured packets"},
		{Name: "offered", Unit: "flits/node/cycle"}, {Name: "accepted", Unit: "flits/node/cycle"},
		{Name: "latency", Unit: "cycles", Ref: "zero_load_latency"},
		{Name: "latency_p99", Unit: "cycles"}, {Name: "network_latency", Unit: "cycles"},
		{Name: "flit_latency", Unit: "cycles"}, {Name: "hops", Unit: "switches"},
		{Name: "zero_load_latency", Unit: "cycles"}, {Name: "saturated"},
	}...)
}

// ParamUnit returns the unit of a swept key: injection_rate is in flits
// or packets per node and cycle (InjectionRateUsesFlits).
func (p *Params) ParamUnit(key string) string {
	switch key {
	case "injection_rate":
		if p.InjectionRateUsesFlits {
			return "flits/node/cycle"
		}
		return "packets/node/cycle"
	case "channel_latency", "sample_period", "drain_limit":
		return "cycles"
	case "flit_bytes":
		return "bytes"
	}
	return ""
}

// Metrics returns the metrics RunATM measures: one dropped_portN per port.
func (p *ATMParams) Metrics() []scenario.MetricDef {
	defs := []scenario.MetricDef{
		{Name: "offered", Unit: "link rate"}, {Name: "accepted", Unit: "link rate"},
		{Name: "latency", Unit: "cycles"}, {Name: "latency_us", Unit: "µs"},
		{Name: "latency_p50", Unit: "cycles"}, {Name: "latency_p99", Unit: "cycles"},
		{Name: "latency_max", Unit: "cycles"}, {Name: "network_latency", Unit: "cycles"},
		{Name: "network_latency_min", Unit: "cycles"}, {Name: "switch_latency_us", Unit: "µs"},
		{Name: "sent", Unit: "cells"}, {Name: "delivered", Unit: "cells"},
		{Name: "dropped", Unit: "cells"}, {Name: "measured_dropped", Unit: "cells"},
	}
	for i := range p.Ports {
		defs = append(defs, scenario.MetricDef{Name: fmt.Sprintf("dropped_port%d", i), Unit: "cells"})
	}
	return append(defs, scenario.MetricDef{Name: "link_utilisation"}, scenario.MetricDef{Name: "link_utilisation_max"},
		scenario.MetricDef{Name: "saturated"})
}

// ParamUnit returns the unit of a swept key of the ATM star.
func (p *ATMParams) ParamUnit(key string) string {
	switch key {
	case "injection_rate":
		return "link rate"
	case "queue_depth":
		return "cells"
	case "sample_period", "drain_limit", "latency":
		return "cycles"
	}
	return ""
}

// Metrics returns the metrics RunMC measures.
func (p *MCParams) Metrics() []scenario.MetricDef {
	return []scenario.MetricDef{
		{Name: "offered", Unit: "link bandwidth"}, {Name: "accepted", Unit: "link bandwidth"},
		{Name: "latency", Unit: "cycles"}, {Name: "latency_us", Unit: "µs"},
		{Name: "latency_p50", Unit: "cycles"}, {Name: "latency_p99", Unit: "cycles"},
		{Name: "latency_max", Unit: "cycles"}, {Name: "network_latency", Unit: "cycles"},
		{Name: "network_latency_min", Unit: "cycles"}, {Name: "delivered_mbps", Unit: "MB/s"},
		{Name: "deliveries"}, {Name: "ordered_deliveries"}, {Name: "credit_stalls"},
		{Name: "hub_wait_cycles", Unit: "cycles"}, {Name: "hub_busy"}, {Name: "filtered"},
		{Name: "link_utilisation"}, {Name: "link_utilisation_max"}, {Name: "saturated"},
	}
}

// ParamUnit returns the unit of a swept key of the Memory Channel hub.
func (p *MCParams) ParamUnit(key string) string {
	switch key {
	case "injection_rate":
		return "link bandwidth"
	case "sample_period", "drain_limit":
		return "cycles"
	}
	return ""
}
