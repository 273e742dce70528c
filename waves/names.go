package waves

import (
	"fmt"
	"strings"
)

// Abbreviations maps each long form a signal or scope name may not use to
// the fixed abbreviation that replaces it (package doc, "Signal names").
// CheckName looks each snake_case word of a name up here, with a trailing
// instance index removed; multiword long forms (host_dma, the conversion of
// NI.HostDma) are in MultiwordAbbreviations.
var Abbreviations = map[string]string{
	"address":      "addr",
	"processor":    "cpu",
	"proc":         "cpu",
	"control":      "ctl",
	"ctrl":         "ctl",
	"firmware":     "fw",
	"hostdma":      "hdma",
	"senddma":      "sdma",
	"recvdma":      "rdma",
	"rcvdma":       "rdma",
	"interrupt":    "irq",
	"intr":         "irq",
	"memory":       "mem",
	"nic":          "ni",
	"netif":        "ni",
	"receive":      "rx",
	"transmit":     "tx",
	"xmit":         "tx",
	"turbochannel": "tc",
	"server":       "srv",
	"completion":   "cpl",
	"node":         "n",
	"sw":           "switch",
	"cnt":          "a plural noun (hits, drops)",
	"count":        "a plural noun (hits, drops)",
}

// MultiwordAbbreviations are the long forms of several snake_case words
// that CheckName refuses as a run of whole words in a part, with the
// abbreviation to use, in the order they are checked.
var MultiwordAbbreviations = [][2]string{
	{"host_dma", "hdma"},
	{"send_dma", "sdma"},
	{"recv_dma", "rdma"},
	{"receive_dma", "rdma"},
	{"flow_control", "fc"},
	{"network_interface", "ni"},
}

// ScopeName converts a component's name, which Akita requires in
// capitalised CamelCase with bracketed indices (sim.NameMustBeValid:
// "N0.NI.SRAM", "Host.Bus.Master[0]", "Mesh.LinkX[3]", "Graph.Link[3][4]"),
// into the waveform convention: each part in snake_case with acronyms
// lower-cased as one word and indices appended ("n0.ni.sram",
// "host.bus.master0", "mesh.link_x3", "graph.link3_4"). A name already in
// the convention is returned unchanged. The registry applies it to every
// declared name, so components keep their Akita names (which their trace
// records carry) and the dump follows the convention.
func ScopeName(name string) string {
	if !needsConversion(name) {
		return name
	}
	var b strings.Builder
	b.Grow(len(name) + 8)
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '[':
			if i > 0 && name[i-1] == ']' {
				b.WriteByte('_')
			}
		case c == ']':
		case c >= 'A' && c <= 'Z':
			if i > 0 && b.Len() > 0 {
				prev := name[i-1]
				lowerOrDigit := prev >= 'a' && prev <= 'z' || prev >= '0' && prev <= '9'
				acronymEnd := prev >= 'A' && prev <= 'Z' && i+1 < len(name) && name[i+1] >= 'a' && name[i+1] <= 'z'
				if lowerOrDigit || acronymEnd {
					b.WriteByte('_')
				}
			}
			b.WriteByte(c + 'a' - 'A')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func needsConversion(name string) bool {
	for i := 0; i < len(name); i++ {
		if c := name[i]; c >= 'A' && c <= 'Z' || c == '[' || c == ']' {
			return true
		}
	}
	return false
}

// CheckName reports whether the hierarchical name scope.name follows the
// naming convention of the package doc: dot-separated parts, each lower
// case letters and digits starting with a letter, snake_case for several
// words, no long form of a fixed abbreviation, and a firmware scope fw only
// directly under an ni scope. The error names the offending part and the
// rule.
func CheckName(full string) error {
	if full == "" {
		return fmt.Errorf("waves: empty signal name")
	}
	prev := ""
	for rest := full; ; {
		p, after, more := strings.Cut(rest, ".")
		if err := checkPart(p); err != nil {
			return fmt.Errorf("waves: name %s: part %q %w", full, p, err)
		}
		if p == "fw" && prev != "ni" {
			return fmt.Errorf("waves: name %s: firmware scope fw must sit directly under its ni", full)
		}
		if !more {
			return nil
		}
		prev, rest = p, after
	}
}

// checkLast checks the last part of full, a signal name declared in a
// scope that already passed CheckName, with CheckName's errors.
func checkLast(full, scope, last string) error {
	if err := checkPart(last); err != nil {
		return fmt.Errorf("waves: name %s: part %q %w", full, last, err)
	}
	if last == "fw" && !strings.HasSuffix("."+scope, ".ni") {
		return fmt.Errorf("waves: name %s: firmware scope fw must sit directly under its ni", full)
	}
	return nil
}

// checkPart checks one part of a name: [a-z][a-z0-9]*(_[a-z0-9]+)*, and no
// long form that Abbreviations or MultiwordAbbreviations replaces. It
// allocates nothing for a good part.
func checkPart(p string) error {
	if p == "" {
		return fmt.Errorf("is empty")
	}
	if c := p[0]; c < 'a' || c > 'z' {
		return fmt.Errorf("must start with a lower-case letter")
	}
	for _, a := range MultiwordAbbreviations {
		// A substring test first: the whole-word test allocates.
		if strings.Contains(p, a[0]) && strings.Contains("_"+p+"_", "_"+a[0]+"_") {
			return fmt.Errorf("spells %q: use %s", a[0], a[1])
		}
	}
	for rest := p; ; {
		w, after, more := strings.Cut(rest, "_")
		if w == "" {
			return fmt.Errorf("has an empty snake_case word (leading, trailing or double _)")
		}
		for j := 0; j < len(w); j++ {
			if c := w[j]; (c < 'a' || c > 'z') && (c < '0' || c > '9') {
				return fmt.Errorf("has %q: only lower-case letters, digits and _ are allowed", string(c))
			}
		}
		base := strings.TrimRight(w, "0123456789")
		if short, ok := Abbreviations[base]; ok {
			return fmt.Errorf("spells %q: use %s", base, short)
		}
		if !more {
			return nil
		}
		rest = after
	}
}
