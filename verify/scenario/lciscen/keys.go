package lciscen

import (
	"fmt"

	"github.com/nisim/nisim/verify/scenario"
)

// The LCI scenarios' key tables (scenario.Keyed): each key's unit, range
// and the origin of its default. Each Validate enforces them first
// (scenario.CheckKeys); the rules on several keys (the payload a run
// queues, the planned operations against the memory budget, the shares of
// the traffic) follow, noted beside their key.

// platformKeys are the platform and variant (Table I; lcilib.PlatformPreset
// and firmware/lci ParseImplementation also take "PPro", "P3", "I-sdma",
// "I-pio", "I-nirx", "I-hrx").
func platformKeys() []scenario.KeySpec {
	return []scenario.KeySpec{
		scenario.Key("platform", "host (Table I)").OneOf("ppro", "p3", "PPro", "P3").From("PPro, the calibration platform"),
		scenario.Key("variant", "LCI implementation").OneOf("sdma", "pio", "nirx", "hrx", "I-sdma", "I-pio", "I-nirx", "I-hrx").From("I-sdma, the base implementation"),
		// Table II's MTUs; validate refuses any other value.
		scenario.Key("mtu", "bytes, the packet size (I-1k, base, I-4k; names compose: pio with 1024 is I-pio-1k)").Range(1024, 4096).
			Also("1024, 2048 or 4096").From("«an MTU of 2 Kbyte», section 5.3"),
	}
}

// nodesKey is the cluster size on the 64-host Myrinet grid.
func nodesKey() scenario.KeySpec {
	// The model's limit: lcitb builds clusters of 2 to 64 hosts (the
	// paper's 64-node cluster, its Myrinet network's size).
	return scenario.Key("nodes", "hosts").AtLeast(2).Limit(64, "lcitb's network of 2 to 64 hosts")
}

// treeKey is the multicast tree.
func treeKey() scenario.KeySpec {
	return scenario.Key("tree", "multicast spanning tree").OneOf("binary", "binomial")
}

// forwardKey is the multicast forwarding: by the NIs (the base
// implementation) or by the hosts (I-sdma-hmc, I-pio-hmc; section 5.4).
func forwardKey() scenario.KeySpec {
	return scenario.Key("forward", "multicast forwarding (host: I-sdma-hmc)").OneOf("ni", "host").
		From("ni, the base implementation")
}

// payloadNote is checkPayload's rule on messages x size.
func payloadNote(size string) string {
	return fmt.Sprintf("messages x %s at most %d bytes", size, maxPayload)
}

// Keys implements scenario.Keyed. lci-logp alone takes variant rcpy
// (I-rcpy's LogP row of Table IV: RemoteCopy's ping-pong and stream).
func (p *LogPParams) Keys() []scenario.KeySpec {
	keys := platformKeys()
	keys[1] = scenario.Key("variant", "LCI implementation").
		OneOf("sdma", "pio", "nirx", "hrx", "rcpy", "I-sdma", "I-pio", "I-nirx", "I-hrx", "I-rcpy").From("I-sdma, the base implementation")
	return append(keys,
		scenario.Key("size", "bytes (one packet of the MTU)").AtLeast(0).Limit(float64(p.packetLimit()), p.packetNote()).From("«16-byte messages» (Tables III, IV)"),
		timesKey(scenario.Key("warm", "round trips ignored").AtLeast(0), "round trip"),
		timesKey(scenario.Key("iters", "round trips measured").AtLeast(2), "round trip").Also("warm + iters within the same bound"),
		timesKey(scenario.Key("stream", "messages of the one-way stream (the gap)").AtLeast(8), "message"),
	)
}

// Keys implements scenario.Keyed.
func (p *LatencyParams) Keys() []scenario.KeySpec {
	return []scenario.KeySpec{
		platformKeys()[0],
		scenario.Key("from", "bytes").AtLeast(0).Limit(mtu, "one packet of the 2 KB MTU"),
		scenario.Key("to", "bytes").AtLeast(float64(max(min(p.From, mtu), 0))).Limit(mtu, "one packet of the 2 KB MTU"),
		scenario.Key("step", "bytes").AtLeast(1),
		timesKey(scenario.Key("iters", "round trips per size").AtLeast(2), "round trip"),
	}
}

// Keys implements scenario.Keyed.
func (p *ThroughputParams) Keys() []scenario.KeySpec {
	return append(platformKeys(),
		scenario.Key("sizes", "bytes (fragmented at the MTU)").AtLeast(1).Limit(maxMessageBytes, "lcitb's largest message, 16 MiB").Also("at least one size").
			EntriesBudget(sizeReportBytes, "size: a report row and a metric with their text"),
		timesKey(scenario.Key("messages", "messages per size").AtLeast(8), "message").Also(payloadNote("the largest size")),
		scenario.Key("copy", "the receiver copies every packet out (figure 8)"),
	)
}

// Keys implements scenario.Keyed.
func (p *BroadcastParams) Keys() []scenario.KeySpec {
	return append(platformKeys(),
		treeKey(),
		forwardKey(),
		nodesKey().From("the paper's 64"),
		scenario.Key("iters", "broadcasts of 16 bytes timed").AtLeast(2).Budget(bcastEntryBytes, "multicast's reach count and last arrival"),
		scenario.Key("stream_size", "bytes").AtLeast(1).Limit(maxMessageBytes, "lcitb's largest message, 16 MiB"),
		scenario.Key("stream_messages", "messages").AtLeast(8).Budget(bcastEntryBytes, "message's reach count and last arrival").
			Also(payloadNote("stream_size")),
	)
}

// Keys implements scenario.Keyed.
func (p *TrafficParams) Keys() []scenario.KeySpec {
	return append(platformKeys(),
		nodesKey(),
		scenario.Key("ops", "operations per node").AtLeast(1).
			Also(fmt.Sprintf("ops x nodes x (%d + max_size) bytes within the memory budget", plannedOpBytes)),
		scenario.Key("max_size", "bytes (the MTU)").AtLeast(0).Limit(float64(p.packetLimit()), p.packetNote()),
		scenario.Key("mcast_pct", "% of the operations").Range(0, 100),
		scenario.Key("fa_pct", "% of the operations").Range(0, 100).Also("mcast_pct + fa_pct at most 100"),
		treeKey(),
		forwardKey(),
		scenario.Key("hot_pct", "% of unicasts and F&A to node 0").Range(0, 100),
		scenario.Key("hot_pause_us", "µs node 0 computes after each operation").AtLeast(0).Limit(float64(maxPauseUs), "scenario.MaxDelay, 1 s"),
		scenario.Key("corrupt_prob", "per packet per link (variant nirx recovers)").Range(0, 1),
		scenario.Key("drop_prob", "per packet per link (variant nirx recovers)").Range(0, 1),
	)
}

// Keys implements scenario.Keyed.
func (p *ReportParams) Keys() []scenario.KeySpec {
	return []scenario.KeySpec{
		scenario.Key("broadcast", "include the 64-node broadcasts (the slowest part)"),
		// Sizes run from 16 to the MTU: a cross-over needs two of them.
		scenario.Key("step", "bytes, of the cross-over sweep").AtLeast(8).Limit(mtu-16, "sizes from 16 to the 2 KB MTU, at least two"),
		timesKey(scenario.Key("iters", "round trips of each LogP ping-pong").AtLeast(2), "round trip").From("as lci-logp"),
	}
}
