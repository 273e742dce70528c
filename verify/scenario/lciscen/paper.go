package lciscen

import (
	fw "github.com/nisim/nisim/firmware/lci"
)

// paper is where the figures come from.
const paper = "lci-myrinet-cluster-protocols.txt"

// logp are a row of Table III or IV in µs; FA < 0 where the paper gives
// none.
type logp struct {
	Os, Or, L, G, E2E, FA float64
	Source                string
}

// paperLogP returns the paper's LogP row for a platform (PPro or P3) and
// implementation: Table III for I-sdma, I-nirx and I-hrx (with their F&A
// latencies), Table IV for I-pio and I-rcpy (no F&A figure); none (all
// -1) for others.
func paperLogP(platform string, c fw.Config) logp {
	v := c.Variant
	switch {
	case c.Reliability == fw.NIRetransmit && c.Variant == fw.SDMA && platform == "PPro":
		return logp{1.8, 2.5, 13.7, 12.6, 18.0, 24.4, "Table III, PPro I-nirx"}
	case c.Reliability == fw.NIRetransmit && c.Variant == fw.SDMA && platform == "P3":
		return logp{0.5, 0.5, 8.3, 5.2, 9.4, 9.0, "Table III, P3 I-nirx"}
	case c.Reliability == fw.HostRetransmit && c.Variant == fw.SDMA && platform == "PPro":
		return logp{3.3, 5.9, 9.3, 10.2, 18.5, 32.5, "Table III, PPro I-hrx"}
	case c.Reliability == fw.HostRetransmit && c.Variant == fw.SDMA && platform == "P3":
		return logp{0.9, 1.2, 7.8, 4.6, 9.9, 13.4, "Table III, P3 I-hrx"}
	case c.Reliability != fw.NoRetransmit:
		return logp{-1, -1, -1, -1, -1, -1, ""}
	case platform == "PPro" && v == fw.RCPY:
		return logp{1.8, 1.2, 16.1, 13.9, 19.1, -1, "Table IV, PPro I-rcpy"}
	case platform == "P3" && v == fw.RCPY:
		return logp{0.6, 0.1, 9.1, 5.1, 9.8, -1, "Table IV, P3 I-rcpy"}
	case platform == "PPro" && v == fw.SDMA:
		return logp{1.8, 2.6, 10.7, 11.1, 15.1, 18.0, "Table III, PPro I-sdma"}
	case platform == "P3" && v == fw.SDMA:
		return logp{0.5, 0.5, 7.8, 4.5, 8.8, 7.4, "Table III, P3 I-sdma"}
	case platform == "PPro" && v == fw.PIO:
		return logp{1.5, 2.3, 6.7, 6.7, 10.4, -1, "Table IV, PPro I-pio"}
	default:
		return logp{0.5, 0.4, 5.2, 2.8, 6.2, -1, "Table IV, P3 I-pio"}
	}
}

// fittedLogP is the LogP metric (addLogP's label) that a variant's one
// calibrated cost is fitted to, "" for none: I-hrx's library send path
// (host/lcilib Costs.HrxSend) to the PPro os, I-rcpy's NTLB work
// (firmware/lci Costs.RcpyXlate) to the PPro L. The PPro I-sdma row is the
// base's calibration as a whole (addLogP's calibrated).
func fittedLogP(platform string, c fw.Config) string {
	switch {
	case platform != "PPro":
		return ""
	case c.Reliability == fw.HostRetransmit && c.Variant == fw.SDMA:
		return "send overhead os"
	case c.Reliability == fw.NoRetransmit && c.Variant == fw.RCPY:
		return "latency L"
	}
	return ""
}

// paperCrossover is the message size where DMA-based sends catch up with
// PIO in end-to-end latency: «The cross-over point is at a message size of
// around 800 bytes on the P3 platform, and at around 1200 bytes on the
// PPro platform» (section 5.2.4).
func paperCrossover(platform string) int {
	if platform == "P3" {
		return 800
	}
	return 1200
}

// paperBroadcastLatency is the 16-byte broadcast latency on 64 nodes with
// binary trees in µs (section 5.4): «On the PPro platform using binary
// trees, the latency of a 16-byte message is 58.5 µs for I-pio, 70.4 µs
// for I-sdma ... On the P3 platform these latencies are 25.7 µs for I-pio,
// 28.9 µs for I-sdma». For binomial trees the paper gives no figure, only
// that they are «consistently lower» (0 here). With host-level forwarding
// (hmc) the text gives I-sdma-hmc's: «135.0 µs for I-sdma-hmc» on the
// PPro, «45.3 µs for I-sdma-hmc» on the P3; none for I-pio-hmc (0).
func paperBroadcastLatency(platform string, v fw.Variant, t fw.Tree, hmc bool) float64 {
	if t != fw.Binary {
		return 0
	}
	switch {
	case hmc && v == fw.PIO:
		return 0
	case hmc && platform == "PPro":
		return 135.0
	case hmc:
		return 45.3
	}
	switch {
	case platform == "PPro" && v == fw.PIO:
		return 58.5
	case platform == "PPro":
		return 70.4
	case v == fw.PIO:
		return 25.7
	default:
		return 28.9
	}
}

// paperBroadcastThroughput is section 5.4's broadcast throughput on the
// P3 platform in MB/s: «I-sdma on the P3 platform is able to achieve a
// multicast throughput of almost 100 Mbyte/s with binary trees; for I-pio
// this peak throughput is 75 Mbyte/s», and with binomial trees «throughput
// to drop to around 37 Mbyte/s for all implementations (close to the
// theoretical maximum of about 41 Mbyte/s)». For the PPro platform the
// text gives no figure (0); for I-sdma-hmc it gives the binomial trees'
// «around 37 Mbyte/s for all implementations» and none for binary trees
// (figure 9 only), none for I-pio-hmc, which it did not measure.
func paperBroadcastThroughput(platform string, v fw.Variant, t fw.Tree, hmc bool) float64 {
	switch {
	case platform != "P3", hmc && (v == fw.PIO || t == fw.Binary):
		return 0
	case t == fw.Binomial:
		return 37
	case v == fw.SDMA:
		return 100
	default:
		return 75
	}
}

// paperRcpyCrossover is the message size above which I-rcpy's end-to-end
// latency is below I-sdma's with the receiver's copy: «on the P3 platform
// I-sdma and I-rcpy show a similar end-to-end latency, while on the PPro
// platform I-sdma's memory copy from the receive queue makes it more
// expensive than I-rcpy for messages larger than 350 bytes» (section
// 5.2.4): 350 on the PPro, none (0) on the P3.
func paperRcpyCrossover(platform string) int {
	if platform == "PPro" {
		return 350
	}
	return 0
}
